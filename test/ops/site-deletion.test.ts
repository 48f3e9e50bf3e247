import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { AlreadyExistsError } from '../../lambdas/domain/errors.js';
import { DynamoRebuildStore } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoSiteDeletionStore } from '../../lambdas/adapters/dynamo/site-deletion-store.js';
import { DynamoLookStore } from '../../lambdas/adapters/dynamo/look-store.js';
import { DynamoShareLinkStore } from '../../lambdas/adapters/dynamo/share-link-store.js';
import { DynamoWebhookLogStore } from '../../lambdas/adapters/dynamo/webhook-log-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import {
  advanceSiteDeletions,
  beginSiteDeletion,
  deleteSite,
  type SiteDeletionDriverDeps,
  type SiteDeletionDeps,
  type SiteDeletionProgress,
} from '../../lambdas/services/site-deletion.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { LOCAL_SITE_CACHE_TTL_MS, SESSIONIZER, sessionizeConsumer } from '../../local/consumers.js';
import { LocalStreamPoller } from '../../local/stream-poller.js';
import { localPaths } from '../../local/service.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { LocalArchiveEraser } from '../../local/archive-eraser.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';
import { scanAll } from '../support/dynamo.js';
import { functionConnection } from '../../local/iam/partition-guard.js';
import { functionArchiveEraser, functionArchiveReader } from '../../local/iam/stand-ins.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const MIN = 60_000;
const T = Date.UTC(2026, 9, 14, 9);
const NOW = Date.UTC(2026, 10, 5, 12);
const GONE = 'example.com';
const KEPT = 'other.com';
const QUERY = { from: '2026-10-01', to: '2026-10-31' };

const ev = (site: string, id: string, visitor: string, ts: number, o: Partial<TrackedEvent> = {}) =>
  trackedEvent({ event_id: `${site}-${id}`, site, hostname: site, visitor_id: visitor, ts, ...o });
const eventsOf = (site: string) => [
  ev(site, 'a', 'visitor-0001', T, { referrer_host: 'www.google.com', channel: 'Search', source: 'Google' }),
  ev(site, 'b', 'visitor-0001', T + MIN, { path: '/pricing' }),
  ev(site, 'c', 'visitor-0002', T + 60 * MIN, { path: '/blog' }),
  ev(site, 'd', 'visitor-0003', T + 3 * 1440 * MIN, { path: '/' }),
];
const paymentsOf = (prefix: string): PaymentFact[] => [
  {
    provider: 'stripe',
    id: `pi_${prefix}1`,
    aliases: [`ch_${prefix}1`],
    status: 'paid',
    currency: 'USD',
    ts: T + 10 * MIN,
    amount: 4900,
    customer_id: `cus_${prefix}1`,
    visitor_id: 'visitor-0001',
  },
  {
    provider: 'stripe',
    id: `pi_${prefix}2`,
    aliases: [],
    status: 'paid',
    currency: 'EUR',
    ts: T + 70 * MIN,
    amount: 10000,
    customer_id: `cus_${prefix}2`,
    visitor_id: 'visitor-0009',
  },
];

/**
 * An item of the deleted site: its domain (or a generation of it) in the key, or a shared link's lookup item
 * (keyed by its token's hash) that names it. Other sites' domains do not contain it.
 */
const ofDeletedSite = (item: Record<string, unknown>) =>
  JSON.stringify([item.pk, item.sk]).includes(GONE) || (item.type === 'SHARE_LINK' && item.site === GONE);

describe('deleting a site: every item and archive file of it, nothing of any other site', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let now: number;
  let poller: LocalStreamPoller;
  const clock = () => now;
  const config = () => new DynamoConfigStore(svc.dynamo);

  async function put(events: TrackedEvent[]) {
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(events);
    await stream.close();
    await poller.drain();
    await svc.archive();
  }
  async function pay(domain: string, facts: PaymentFact[]) {
    const site = (await config().getSite(domain)) as SiteConfig;
    for (const fact of facts)
      await applyProviderFacts(dynamoPaymentDeps(svc.dynamo, clock), site, {
        event_id: 'e',
        event_type: 't',
        payments: [fact],
        subscriptions: [],
        customers: [],
      });
  }
  /** A deletion's stores on `conn`: the table unrestricted (the CLI's operator) unless a function's connection is given. */
  function deps(o: Partial<SiteDeletionDeps> = {}, conn = svc.dynamo): SiteDeletionDeps {
    const archive = localPaths(svc.dataDir).archive;
    return {
      sites: new DynamoConfigStore(conn),
      store: new DynamoSiteDeletionStore(conn),
      namespaces: new DynamoRebuildStore(conn),
      archive: new DuckDbArchiveReader(archive),
      eraser: new LocalArchiveEraser(archive),
      fence: async () => {
        now += LOCAL_SITE_CACHE_TTL_MS + 1;
        await poller.drain();
        await svc.archive();
      },
      clock,
      ...o,
    };
  }

  beforeEach(async () => {
    now = NOW;
    svc = await startTestService(
      [
        { domain: GONE, timezone: 'UTC' },
        { domain: KEPT, timezone: 'UTC' },
      ],
      { sessionizeIntervalMs: 0, clock },
    );
    poller = new LocalStreamPoller(
      localPaths(svc.dataDir).stream,
      SESSIONIZER,
      sessionizeConsumer(svc.dynamo, localPaths(svc.dataDir).stream, clock),
      {
        batchSize: 1000,
      },
    );
    await put([...eventsOf(GONE), ...eventsOf(KEPT)]);
    await pay(GONE, paymentsOf('g'));
    await pay(KEPT, paymentsOf('k'));
    // A second generation of the deleted site, being built: every write goes to both from now on.
    const generation = await new DynamoRebuildStore(svc.dynamo).nextGeneration(GONE, 0);
    await config().beginBuilding(GONE, generation);
    now += LOCAL_SITE_CACHE_TTL_MS + 1;
    await put([ev(GONE, 'e', 'visitor-0004', T + 4 * 1440 * MIN), ev(KEPT, 'e', 'visitor-0004', T + 4 * 1440 * MIN)]);
    await pay(GONE, [{ ...paymentsOf('g')[0]!, id: 'pi_g3', aliases: [], ts: T + 4 * 1440 * MIN + MIN }]);
    for (const domain of [GONE, KEPT]) {
      await svc.dynamo.doc.send(
        new PutCommand({
          TableName: svc.dynamo.table,
          Item: { pk: `PROVIDER#${domain}`, sk: 'stripe', type: 'PROVIDER', sealed_secret: '{}', connected: 'x' },
        }),
      );
      await new DynamoWebhookLogStore(svc.dynamo).record(domain, 'stripe', { ts: 'x', status: 200, result: 'ok' });
      // Someone looked at its reports (a LOOK item in the partition every site shares).
      await new DynamoLookStore(svc.dynamo).look(domain, now, now - 3_600_000);
      await new DynamoShareLinkStore(svc.dynamo).create(domain === GONE ? 'hash-g' : 'hash-k', {
        id: 'shr_1',
        account: 'acct',
        site: domain,
        site_created: 'x',
        name: 'Team',
        created: 'x',
        password_hash: null,
      });
    }
  }, 120_000);
  afterEach(async () => svc.cleanup());

  it('leaves no item or archive file of the site, and every other item exactly as it was', async () => {
    const items = await scanAll(svc.dynamo);
    const mine = items.filter(ofDeletedSite);
    // The fixture holds what a deletion must reach: both generations' visits, rollups, payments, the rest.
    for (const prefix of [
      'SITES',
      'LOOKS',
      'SHARE#',
      'SHARES#',
      'PROVIDER#',
      'WEBHOOK#',
      'REBUILD#',
      'VIS#',
      'R#',
      'PAY#',
      'PAYID#',
      'PL#',
      'PT#',
      'CP#',
    ])
      expect(
        mine.some((i) => String(i.pk).startsWith(prefix)),
        prefix,
      ).toBe(true);
    expect(mine.some((i) => String(i.pk).includes(`${GONE}~1`))).toBe(true);
    const others = items.filter((i) => !ofDeletedSite(i));
    const keptReports = await reportSnapshot(svc.dynamo, (await config().getSite(KEPT))!, NOW, QUERY, ['visitor-0001']);
    const archive = localPaths(svc.dataDir).archive;
    expect(existsSync(join(archive, `site=${GONE}`))).toBe(true);

    const progress: SiteDeletionProgress[] = [];
    const outcome = await deleteSite(deps({ onProgress: (p) => void progress.push(p) }), GONE);

    expect(outcome).toMatchObject({ site: GONE, generations: 2, resumed: false });
    expect(outcome.deleted).toBe(mine.length);
    expect(outcome.archive_files).toBeGreaterThan(0);
    expect([...new Set(progress.map((p) => p.phase))]).toEqual([
      'removing the site',
      'waiting for writers',
      'deleting items',
      'deleting the archive',
    ]);
    const after = await scanAll(svc.dynamo);
    expect(after.filter(ofDeletedSite)).toEqual([]);
    // Every other site's item (and every shared one) compared item by item.
    expect(after).toEqual(others);
    expect(existsSync(join(archive, `site=${GONE}`))).toBe(false);
    expect(existsSync(join(archive, `site=${KEPT}`))).toBe(true);
    expect(await new DuckDbArchiveReader(archive).firstDay(KEPT)).toBe('2026-10-14');
    expect(await config().getSite(GONE)).toBeNull();
    expect(await reportSnapshot(svc.dynamo, (await config().getSite(KEPT))!, NOW, QUERY, ['visitor-0001'])).toEqual(
      keptReports,
    );
    // The domain can be added again, empty.
    await config().addSite({ ...(await config().getSite(KEPT))!, domain: GONE, created: 'x' });
  }, 120_000);

  it('resumes after a crash from its checkpoint; the site is gone from the first step on and cannot be added meanwhile', async () => {
    let crashed = false;
    const crashing = deps({
      onProgress: (p) => {
        if (p.phase === 'deleting items' && p.generation?.index === 2 && !crashed) {
          crashed = true;
          throw new Error('connection lost');
        }
      },
    });
    await expect(deleteSite(crashing, GONE)).rejects.toThrow('connection lost');
    expect(await config().getSite(GONE)).toBeNull();
    expect(await new DynamoSiteDeletionStore(svc.dynamo).get(GONE)).toMatchObject({ done: [0] });
    await expect(config().addSite({ ...(await config().getSite(KEPT))!, domain: GONE })).rejects.toThrow(
      AlreadyExistsError,
    );
    let fences = 0;
    const outcome = await deleteSite(
      deps({
        fence: async () => {
          fences++;
        },
      }),
      GONE,
    );
    expect(outcome).toMatchObject({ resumed: true, generations: 2 });
    expect(fences).toBe(1);
    expect((await scanAll(svc.dynamo)).filter(ofDeletedSite)).toEqual([]);
    expect(await new DynamoSiteDeletionStore(svc.dynamo).pending()).toEqual([]);
  }, 120_000);

  it('the first step alone (the app) removes the site and its connections and records the deletion', async () => {
    // The app function begins it and the operations function finishes it, each on its own role's policy.
    const { deletion, resumed } = await beginSiteDeletion(deps({}, functionConnection(svc.dynamo, 'app')), GONE);
    expect(resumed).toBe(false);
    expect(deletion).toMatchObject({ domain: GONE, generations: [0, 1], done: [], archive_files: null });
    expect(await config().getSite(GONE)).toBeNull();
    expect(await config().listProviders(GONE)).toEqual([]);
    expect(await new DynamoSiteDeletionStore(svc.dynamo).pending()).toEqual([deletion]);
    await expect(beginSiteDeletion(deps(), 'nosuch.example')).rejects.toThrow(/does not exist/);

    // The scheduled runs finish it: nothing before its fence has passed (no sleeping), everything after.
    const kept = (await scanAll(svc.dynamo)).filter((i) => !ofDeletedSite(i) && i.pk !== 'SITE_DELETIONS');
    const { fence, ...rest } = deps({}, functionConnection(svc.dynamo, 'operations'));
    const logged: unknown[] = [];
    const driver = {
      ...rest,
      archive: functionArchiveReader(rest.archive, 'operations'),
      eraser: functionArchiveEraser(rest.eraser, 'operations'),
      fenceMs: 10 * MIN,
      catchUp: () => fence(0),
      logger: { error: (...args: unknown[]) => void logged.push(args) } as unknown as SiteDeletionDriverDeps['logger'],
    };
    expect(await advanceSiteDeletions(driver, now + MIN)).toEqual([]);
    expect((await scanAll(svc.dynamo)).filter(ofDeletedSite).length).toBeGreaterThan(1);
    now += 10 * MIN;
    expect(await advanceSiteDeletions(driver, now + MIN)).toEqual([GONE]);
    expect(logged).toEqual([]);
    expect((await scanAll(svc.dynamo)).filter(ofDeletedSite)).toEqual([]);
    expect(existsSync(join(localPaths(svc.dataDir).archive, `site=${GONE}`))).toBe(false);
    expect((await scanAll(svc.dynamo)).filter((i) => !ofDeletedSite(i) && i.pk !== 'SITE_DELETIONS')).toEqual(kept);
  }, 120_000);
});
