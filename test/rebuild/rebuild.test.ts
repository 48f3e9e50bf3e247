import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inputSize, reliabilityOnly } from '../support/suite.js';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore, GenerationConflictError } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import {
  abandonRebuild,
  ArchiveTooShortError,
  rebuildSite,
  type RebuildDeps,
  type RebuildProgress,
} from '../../lambdas/services/rebuild.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { DATA_LAYOUT, namespaceOf, type SiteConfig } from '../../lambdas/domain/site.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { LOCAL_SITE_CACHE_TTL_MS, SESSIONIZER, sessionizeConsumer } from '../../local/consumers.js';
import { LocalStreamPoller } from '../../local/stream-poller.js';
import { localPaths } from '../../local/service.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';
import { scanAll } from '../support/dynamo.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const MIN = 60_000;
const T = Date.UTC(2026, 9, 14, 9);
const NOW = Date.UTC(2026, 10, 5, 12);
const DOMAIN = 'example.com';
const QUERY = { from: '2026-10-01', to: '2026-10-31' };
const VISITORS = ['visitor-0001', 'visitor-0002', 'visitor-0003', 'visitor-0004'];

const ev = (id: string, visitor: string, ts: number, o: Partial<TrackedEvent> = {}) =>
  trackedEvent({ event_id: id, site: DOMAIN, hostname: DOMAIN, visitor_id: visitor, ts, ...o });

/** Classified by an older rule set: chatgpt.com as a plain Referral (today's rules say AI). */
const EVENTS: TrackedEvent[] = [
  ev('r1', 'visitor-0001', T, { referrer_host: 'chatgpt.com', channel: 'Referral', source: 'chatgpt.com', path: '/' }),
  ev('r2', 'visitor-0001', T + MIN, { path: '/pricing' }),
  ev('r3', 'visitor-0002', T + 60 * MIN, {
    referrer_host: 'news.ycombinator.com',
    channel: 'Communities',
    source: 'Hacker News',
    path: '/blog',
  }),
  ev('r4', 'visitor-0002', T + 3 * 1440 * MIN, { path: '/' }),
  ev('r5', 'visitor-0003', T + 5 * 1440 * MIN, {
    referrer_host: 'www.google.com',
    channel: 'Search',
    source: 'Google',
    path: '/',
  }),
];
const pay = (f: Partial<PaymentFact> & { id: string }): PaymentFact => ({
  provider: 'stripe',
  aliases: [],
  status: 'paid',
  currency: 'USD',
  ...f,
});
const PAYMENTS: PaymentFact[] = [
  pay({ id: 'pi_1', ts: T + 10 * MIN, amount: 4900, customer_id: 'cus_1', visitor_id: 'visitor-0001' }),
  pay({
    id: 'pi_2',
    ts: T + 70 * MIN,
    amount: 10000,
    currency: 'EUR',
    customer_id: 'cus_2',
    visitor_id: 'visitor-0002',
  }),
  { provider: 'stripe', id: 'pi_2', aliases: ['ch_2'], refunded: 2000 },
  pay({ id: 'in_3', ts: T + 10 * 1440 * MIN, amount: 4900, customer_id: 'cus_1', is_renewal: true }),
];

/** True for an item of data derived for `ns` (its partition key's second segment), not configuration. */
const inNamespace = (ns: string) => (item: Record<string, unknown>) =>
  String(item.pk).split('#')[1] === ns && !/^(SITES|PROVIDER|WEBHOOK|REBUILD)/.test(String(item.pk));

describe('footfall rebuild: a new generation beside the live data, switched in one write', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let now: number;
  let poller: LocalStreamPoller;
  const clock = () => now;
  const config = () => new DynamoConfigStore(svc.dynamo);
  const site = async () => (await config().getSite(DOMAIN)) as SiteConfig;
  /** What a reader sees now: the SITE item read per request, as the report functions do. */
  const read = async () => reportSnapshot(svc.dynamo, await site(), NOW, QUERY, VISITORS);

  async function put(events: TrackedEvent[]) {
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(events);
    await stream.close();
    await poller.drain();
    await svc.archive();
  }
  async function payments(facts: PaymentFact[]) {
    const s = await site();
    for (const fact of facts)
      await applyProviderFacts(dynamoPaymentDeps(svc.dynamo, clock), s, {
        event_id: 'e',
        event_type: 't',
        payments: [fact],
        subscriptions: [],
        customers: [],
      });
  }

  beforeEach(async () => {
    now = NOW;
    svc = await startTestService([{ domain: DOMAIN, timezone: 'UTC' }], { sessionizeIntervalMs: 0, clock });
    // The test's own sessionizer, whose site cache runs on the test's clock: the fence below waits it out by moving the clock.
    poller = new LocalStreamPoller(
      localPaths(svc.dataDir).stream,
      SESSIONIZER,
      sessionizeConsumer(svc.dynamo, localPaths(svc.dataDir).stream, clock),
      {
        batchSize: 1000,
      },
    );
    await put(EVENTS);
    await payments(PAYMENTS);
  }, 120_000);
  afterEach(async () => svc.cleanup());

  function deps(o: Partial<RebuildDeps> = {}): RebuildDeps {
    return {
      archive: new DuckDbArchiveReader(localPaths(svc.dataDir).archive),
      sites: config(),
      store: new DynamoRebuildStore(svc.dynamo),
      visits: new DynamoVisitStore(svc.dynamo),
      rollups: new DynamoRollupStore(svc.dynamo),
      payments: dynamoPaymentDeps(svc.dynamo, clock),
      // The local fence: the site cache's TTL passes, then the stream is drained into the sessionizer and the archive.
      fence: async () => {
        now += LOCAL_SITE_CACHE_TTL_MS + 1;
        await poller.drain();
        await svc.archive();
      },
      drain: async () => {
        now += LOCAL_SITE_CACHE_TTL_MS + 1;
      },
      clock,
      ...o,
    };
  }
  const firstTrackedDay = async () => new DynamoRebuildStore(svc.dynamo).firstVisitDay(namespaceOf(await site()));
  const rebuild = async (o: Partial<RebuildDeps> = {}) =>
    rebuildSite(deps(o), DOMAIN, { firstTrackedDay: await firstTrackedDay() });

  it("replays today's channel rules into generation 1, switches, and deletes generation 0", async () => {
    const before = await read();
    expect(before.channels.rows.map((r) => [r.key, r.visitors])).toContainEqual(['Referral', 1]);
    const outcome = await rebuild();
    expect(outcome).toMatchObject({
      site: DOMAIN,
      generation: 1,
      replaced: 0,
      resumed: false,
      events: 5,
      batches: 1,
      payments: 3,
    });
    expect(await site()).toMatchObject({ generation: 1 });
    expect((await site()).building).toBeUndefined();
    expect((await site()).retired).toBeUndefined();
    const after = await read();
    expect(after.channels.rows.map((r) => [r.key, r.visitors])).toContainEqual(['AI', 1]);
    expect(after.channels.rows.map((r) => r.key)).not.toContain('Referral');
    // Every other number is the same: visits, visitors, page views, payments and revenue, retention.
    expect(after.overview.current).toEqual(before.overview.current);
    expect(after.payments.rows.map((p) => [p.provider_payment_id, p.amount_usd, p.net_usd])).toEqual(
      before.payments.rows.map((p) => [p.provider_payment_id, p.amount_usd, p.net_usd]),
    );
    // Retention by first-touch channel: the same customers, under today's name of their channel.
    expect(JSON.stringify(after.retention)).toBe(JSON.stringify(before.retention).replaceAll('"Referral"', '"AI"'));
    // The payment of visitor-0001 is now credited to AI, the channel of the visit that earned it.
    expect(after.payments.rows.find((p) => p.provider_payment_id === 'pi_1')?.touch?.channel).toBe('AI');
    // Nothing of generation 0's derived data is left; generation 1's is there.
    const items = await scanAll(svc.dynamo);
    expect(items.filter(inNamespace(DOMAIN))).toEqual([]);
    expect(items.filter(inNamespace(`${DOMAIN}~1`)).length).toBeGreaterThan(20);
  }, 120_000);

  it('readers see the numbers from before or after, never a mix: reports read at every step and in a loop meanwhile', async () => {
    const before = await read();
    const seen: unknown[] = [];
    let done = false;
    // The reliability suite reads in a loop for the whole rebuild; npm test reads a few times at its start beside the
    // reads at every step (a loop of full snapshots slows the rebuild's own reads and writes some fifteenfold).
    const loopReads = inputSize(3, Number.POSITIVE_INFINITY);
    const loop = (async () => {
      for (let n = 0; !done && n < loopReads; n++) seen.push(await read());
    })();
    const phases = new Set<string>();
    await rebuild({
      onProgress: async (p: RebuildProgress) => {
        phases.add(p.phase);
        seen.push(await read());
      },
    });
    done = true;
    await loop;
    const after = await read();
    expect(after).not.toEqual(before);
    expect([...phases]).toEqual([
      'waiting for writers',
      'reading archive',
      'sessionizing',
      'crediting payments',
      'switching',
      'cleaning up',
    ]);
    expect(seen.length).toBeGreaterThan(8);
    for (const answer of seen) expect([before, after]).toContainEqual(answer);
  }, 120_000);

  it('events and payments that arrive during the rebuild are in the new generation too', async () => {
    const later = [
      ev('n1', 'visitor-0004', T + 6 * 1440 * MIN, {
        referrer_host: 'chatgpt.com',
        channel: 'AI',
        source: 'ChatGPT',
        path: '/',
      }),
      ev('n2', 'visitor-0001', T + 2 * MIN, { path: '/docs' }),
    ];
    let sent = false;
    const outcome = await rebuild({
      onProgress: async (p) => {
        if (p.phase !== 'reading archive' || sent) return;
        sent = true;
        // After the fence: the stream's sessionizer writes both generations; an event of visitor-0001 is in both the archive read and the stream.
        await put(later);
        await payments([pay({ id: 'pi_4', ts: T + 6 * 1440 * MIN + MIN, amount: 1500, visitor_id: 'visitor-0004' })]);
      },
    });
    expect(outcome.generation).toBe(1);
    const after = await read();
    expect(after.overview.current).toMatchObject({ visitors: 4, payments: 4 });
    expect(after.payments.rows.find((p) => p.provider_payment_id === 'pi_4')?.touch?.channel).toBe('AI');
    // visitor-0001's visit holds /docs once, whether it came through the archive, the stream, or both.
    const [visit] = await new DynamoVisitStore(svc.dynamo).visitsAround(`${DOMAIN}~1`, 'visitor-0001', 0, NOW);
    expect(visit?.events.map((e) => e.path)).toEqual(['/', '/pricing', '/docs']);
    // The same as a rebuild of everything from scratch.
    await rebuild();
    expect(await read()).toEqual(after);
  }, 120_000);

  it('a crash leaves the live generation untouched; running again resumes from the checkpoint, --abandon gives up', async () => {
    const before = await read();
    const liveItems = async () => (await scanAll(svc.dynamo)).filter(inNamespace(DOMAIN));
    const live = await liveItems();
    const failing = {
      events: async () => Promise.reject(new Error('Athena query failed: TABLE_NOT_FOUND')),
      firstDay: async () => '2026-10-14',
      visitors: async () => (async function* () {})(),
    };
    await expect(rebuild({ archive: failing })).rejects.toThrow(/TABLE_NOT_FOUND/);
    expect(await site()).toMatchObject({ building: 1 });
    expect(await read()).toEqual(before);
    expect(await liveItems()).toEqual(live);
    // A second rebuild may not start beside it.
    await expect(config().beginBuilding(DOMAIN, 9)).rejects.toThrow(GenerationConflictError);
    // Abandoned: the live data is as it was, generation 1 is gone, the next rebuild builds generation 2.
    expect(await abandonRebuild(deps(), DOMAIN)).toMatchObject({ abandoned: 1 });
    expect((await site()).building).toBeUndefined();
    expect((await scanAll(svc.dynamo)).filter(inNamespace(`${DOMAIN}~1`))).toEqual([]);
    expect(await liveItems()).toEqual(live);
    expect((await rebuild()).generation).toBe(2);
  }, 120_000);

  // 1,500 more events and three rebuilds: a crash-and-resume test, run by the reliability suite (docs/reliability.md).
  reliabilityOnly('a rebuild stopped by a crash', () => {
    it('a rebuild stopped in the middle of the archive resumes at its checkpoint and ends as a clean one would', async () => {
      await put(
        Array.from({ length: 1500 }, (_, i) =>
          ev(`bulk-${i}`, `bulk-${String(i % 40).padStart(4, '0')}`, T + 1440 * MIN + i * 7 * MIN),
        ),
      );
      const archive = new DuckDbArchiveReader(localPaths(svc.dataDir).archive);
      let pages = 0;
      // The archive read breaks after the first 1,000 events (one batch) are sessionized.
      const breaking = {
        firstDay: (s: string) => archive.firstDay(s),
        visitors: (s: string, f: string, t: string) => archive.visitors(s, f, t),
        events: async (s: string, f: string, t: string) => {
          const inner = await archive.events(s, f, t);
          return (async function* () {
            for await (const page of inner) {
              for (let i = 0; i < page.length; i += 500) {
                if (++pages > 2) throw new Error('connection reset');
                yield page.slice(i, i + 500);
              }
            }
          })();
        },
      };
      await expect(rebuild({ archive: breaking })).rejects.toThrow(/connection reset/);
      const checkpoint = await new DynamoRebuildStore(svc.dynamo).checkpoint(DOMAIN, 1);
      expect(checkpoint).toMatchObject({ generation: 1, batches: 1, events: 1000 });
      const resumed = await rebuild();
      expect(resumed).toMatchObject({ generation: 1, resumed: true, events: 1505, batches: 2 });
      const afterResume = await read();
      await rebuild();
      expect(await read()).toEqual(afterResume);
    }, 120_000);
  });

  it('migrates a site whose data is in another storage layout: reports answer 503 until the rebuild switches to this layout', async () => {
    const before = await read();
    // As after deploying a release whose DATA_LAYOUT is not the one the site's data was written in.
    await svc.dynamo.doc.send(
      new UpdateCommand({
        TableName: svc.dynamo.table,
        Key: { pk: 'SITES', sk: `SITE#${DOMAIN}` },
        UpdateExpression: 'SET layout = :l',
        ExpressionAttributeValues: { ':l': DATA_LAYOUT + 1 },
      }),
    );
    await expect(read()).rejects.toThrow(UnavailableError);
    await expect(read()).rejects.toThrow(
      `its data is stored in layout ${DATA_LAYOUT + 1} and this release reads layout ${DATA_LAYOUT}`,
    );
    await rebuild();
    expect(await site()).toMatchObject({ generation: 1, layout: DATA_LAYOUT });
    expect((await read()).overview).toEqual(before.overview);
  }, 120_000);

  it('refuses, before any write, to drop data older than the archive', async () => {
    const short = {
      firstDay: async () => '2026-10-18',
      events: async () => (async function* () {})(),
      visitors: async () => (async function* () {})(),
    };
    const items = await scanAll(svc.dynamo);
    await expect(rebuild({ archive: short })).rejects.toThrow(ArchiveTooShortError);
    await expect(rebuild({ archive: short })).rejects.toThrow(
      /archive starts 2026-10-18 but the site has visits from 2026-10-14/,
    );
    expect(await scanAll(svc.dynamo)).toEqual(items);
  });
});
