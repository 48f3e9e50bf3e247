import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { rebuildSite, type RebuildDeps } from '../../lambdas/services/rebuild.js';
import { namespaceOf, type SiteConfig } from '../../lambdas/domain/site.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { LOCAL_SITE_CACHE_TTL_MS, SESSIONIZER, sessionizeConsumer } from '../../local/consumers.js';
import { LocalStreamPoller } from '../../local/stream-poller.js';
import { localPaths } from '../../local/service.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const MIN = 60_000;
const DAY = 1440 * MIN;
const T = Date.UTC(2026, 9, 3, 9);
export const NOW = Date.UTC(2026, 10, 5, 12);
export const DOMAIN = 'example.com';
export const QUERY = { from: '2026-10-01', to: '2026-10-31' };
export const VISITORS = ['visitor-0001', 'visitor-0002', 'visitor-0003'];
const SOURCES = [
  { referrer_host: 'www.google.com', channel: 'Search', source: 'Google' },
  { referrer_host: 'news.ycombinator.com', channel: 'Communities', source: 'Hacker News' },
  {},
] as const;

/** Three visitors over four weeks, two pages a visit: visits, page views, channels and a series. */
export const EVENTS: TrackedEvent[] = VISITORS.flatMap((visitor, v) =>
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
export const PAYMENTS: PaymentFact[] = [
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

/**
 * A local service with one site (UTC) holding the three visitors' events (in
 * the archive too), the payments, and the rollups compacted; the site's
 * reports as a reader sees them, and a `footfall rebuild` of it on the test's clock.
 */
export async function startScenario() {
  let now = NOW;
  const clock = () => now;
  const svc = await startTestService([{ domain: DOMAIN, timezone: 'UTC' }], { sessionizeIntervalMs: 0, clock });
  const poller = new LocalStreamPoller(
    localPaths(svc.dataDir).stream,
    SESSIONIZER,
    sessionizeConsumer(svc.dynamo, localPaths(svc.dataDir).stream, clock),
    {
      batchSize: 1000,
    },
  );
  const config = new DynamoConfigStore(svc.dynamo);
  const site = async () => (await config.getSite(DOMAIN)) as SiteConfig;
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
  const rebuildDeps: RebuildDeps = {
    archive: new DuckDbArchiveReader(localPaths(svc.dataDir).archive),
    sites: config,
    store: new DynamoRebuildStore(svc.dynamo),
    visits: new DynamoVisitStore(svc.dynamo),
    rollups: new DynamoRollupStore(svc.dynamo),
    payments: dynamoPaymentDeps(svc.dynamo, clock),
    // The local fence: the site cache's TTL passes on the test's clock, then the stream is drained.
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
  return {
    svc,
    clock,
    site,
    read: async () => reportSnapshot(svc.dynamo, await site(), NOW, QUERY, VISITORS),
    /** `footfall rebuild --site` of the scenario's site; resolves with the generation made live. */
    rebuild: async (domain = DOMAIN) => {
      const firstTrackedDay = await new DynamoRebuildStore(svc.dynamo).firstVisitDay(namespaceOf(await site()));
      return (await rebuildSite(rebuildDeps, domain, { firstTrackedDay })).generation;
    },
  };
}
