import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../../lambdas/adapters/dynamo/payment-deps.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { rebuildSite, type RebuildDeps } from '../../lambdas/services/rebuild.js';
import { DATA_LAYOUT, namespaceOf, type SiteConfig } from '../../lambdas/domain/site.js';
import { upgradePlan } from '../../lambdas/domain/upgrade.js';
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
const DAY = 1440 * MIN;
const T = Date.UTC(2026, 9, 3, 9);
const NOW = Date.UTC(2026, 10, 5, 12);
const DOMAIN = 'example.com';
const QUERY = { from: '2026-10-01', to: '2026-10-31' };
const VISITORS = ['visitor-0001', 'visitor-0002', 'visitor-0003'];
const SOURCES = [
  { referrer_host: 'www.google.com', channel: 'Search', source: 'Google' },
  { referrer_host: 'news.ycombinator.com', channel: 'Communities', source: 'Hacker News' },
  {},
] as const;

/** Three visitors over four weeks, two pages a visit: visits, page views, channels and a series. */
const EVENTS: TrackedEvent[] = VISITORS.flatMap((visitor, v) =>
  [0, 6, 13, 20].flatMap((day, i) => [
    trackedEvent({
      event_id: `${visitor}-${day}-a`,
      site: DOMAIN,
      hostname: DOMAIN,
      visitor_id: visitor,
      ts: T + (day + v) * DAY,
      path: '/',
      ...(i === 0 ? SOURCES[v] : {}),
    }),
    trackedEvent({
      event_id: `${visitor}-${day}-b`,
      site: DOMAIN,
      hostname: DOMAIN,
      visitor_id: visitor,
      ts: T + (day + v) * DAY + 2 * MIN,
      path: `/page-${v}`,
    }),
  ]),
);
const PAYMENTS: PaymentFact[] = [
  {
    provider: 'stripe',
    id: 'pi_1',
    aliases: [],
    status: 'paid',
    currency: 'USD',
    ts: T + 5 * MIN,
    amount: 4900,
    customer_id: 'cus_1',
    visitor_id: 'visitor-0001',
  },
  {
    provider: 'stripe',
    id: 'pi_2',
    aliases: [],
    status: 'paid',
    currency: 'EUR',
    ts: T + DAY + 5 * MIN,
    amount: 10000,
    customer_id: 'cus_2',
    visitor_id: 'visitor-0002',
  },
  {
    provider: 'stripe',
    id: 'in_3',
    aliases: [],
    status: 'paid',
    currency: 'USD',
    ts: T + 14 * DAY,
    amount: 4900,
    customer_id: 'cus_1',
    is_renewal: true,
  },
];

describe('an upgrade onto a stack with data: version N wrote it, version N+1 reads every report equal', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let now: number;
  let poller: LocalStreamPoller;
  const clock = () => now;
  const config = () => new DynamoConfigStore(svc.dynamo);
  const site = async () => (await config().getSite(DOMAIN)) as SiteConfig;
  const read = async () => reportSnapshot(svc.dynamo, await site(), NOW, QUERY, VISITORS);
  const setSite = (update: string) =>
    svc.dynamo.doc.send(
      new UpdateCommand({
        TableName: svc.dynamo.table,
        Key: { pk: 'SITES', sk: `SITE#${DOMAIN}` },
        UpdateExpression: update,
      }),
    );

  beforeEach(async () => {
    now = NOW;
    svc = await startTestService([{ domain: DOMAIN, timezone: 'UTC' }], { sessionizeIntervalMs: 0, clock });
    poller = new LocalStreamPoller(localPaths(svc.dataDir).stream, SESSIONIZER, sessionizeConsumer(svc.dynamo, clock), {
      batchSize: 1000,
    });
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(EVENTS);
    await stream.close();
    await poller.drain();
    await svc.archive();
    for (const fact of PAYMENTS)
      await applyProviderFacts(dynamoPaymentDeps(svc.dynamo, clock), await site(), {
        event_id: 'e',
        event_type: 't',
        payments: [fact],
        subscriptions: [],
        customers: [],
      });
    // The compactor folds the deltas into ROLLUP and ROLLUP_COUNTS items, as the scheduled function does.
    await svc.scheduled();
  }, 120_000);
  afterEach(async () => svc.cleanup());

  /**
   * Version N's items: those of a release before the visits counts items and
   * the visitors' payments markers (same `DATA_LAYOUT`), which the SITE item's
   * flags tell the readers apart from.
   */
  async function asPreviousRelease(): Promise<number> {
    const ns = namespaceOf(await site());
    const older = (await scanAll(svc.dynamo)).filter(
      (i) =>
        (i.pk === `R#${ns}#visits` && String(i.sk).startsWith('C#')) ||
        (String(i.pk).startsWith(`VIS#${ns}#`) && i.sk === 'W#payments'),
    );
    for (const i of older)
      await svc.dynamo.doc.send(new DeleteCommand({ TableName: svc.dynamo.table, Key: { pk: i.pk, sk: i.sk } }));
    await setSite('REMOVE visit_counts, payment_marks');
    return older.length;
  }

  it('same layout, older items: every report reads equal with no migration', async () => {
    const reference = await read();
    expect(reference.overview.current).toMatchObject({ visitors: 3, payments: 3 });
    expect(await asPreviousRelease()).toBeGreaterThan(10);
    const plan = upgradePlan({ version: '0.0.9', layout: DATA_LAYOUT }, [await site()], {
      version: '0.1.0',
      layout: DATA_LAYOUT,
    });
    expect(plan).toMatchObject({ safe: true, sites: [{ action: 'recommended' }] });
    expect(await read()).toEqual(reference);
  }, 120_000);

  it('an older layout: 503 from the deploy, then `footfall rebuild` migrates it and every report reads equal', async () => {
    const reference = await read();
    await asPreviousRelease();
    await setSite('REMOVE layout');
    const plan = upgradePlan({ version: '0.0.9', layout: 1 }, [await site()], {
      version: '0.1.0',
      layout: DATA_LAYOUT,
    });
    expect(plan).toMatchObject({ safe: true, sites: [{ domain: DOMAIN, layout: 1, action: 'rebuild' }] });
    await expect(read()).rejects.toThrow(/layout 1 .*`footfall rebuild --site example.com`/);
    const deps: RebuildDeps = {
      archive: new DuckDbArchiveReader(localPaths(svc.dataDir).archive),
      sites: config(),
      store: new DynamoRebuildStore(svc.dynamo),
      visits: new DynamoVisitStore(svc.dynamo),
      rollups: new DynamoRollupStore(svc.dynamo),
      payments: dynamoPaymentDeps(svc.dynamo, clock),
      fence: async () => {
        now += LOCAL_SITE_CACHE_TTL_MS + 1;
        await poller.drain();
        await svc.archive();
      },
      drain: async () => {
        now += LOCAL_SITE_CACHE_TTL_MS + 1;
      },
      clock,
    };
    const firstTrackedDay = await new DynamoRebuildStore(svc.dynamo).firstVisitDay(namespaceOf(await site()));
    await rebuildSite(deps, DOMAIN, { firstTrackedDay });
    expect(await site()).toMatchObject({ layout: DATA_LAYOUT, generation: 1, visit_counts: true, payment_marks: true });
    expect(upgradePlan(null, [await site()], { version: '0.1.0', layout: DATA_LAYOUT }).sites[0]?.action).toBe('ok');
    await svc.scheduled();
    expect(await read()).toEqual(reference);
  }, 120_000);
});
