import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { localPaths } from '../../local/service.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';

/**
 * The hand-built scenario of the report tests (every expected number in
 * `reports.test.ts` is worked out by hand from it). Site `shop.test`,
 * Europe/Berlin, now 2026-03-31 10:00Z; the range is March 2026.
 *
 * Visits: V1 alice 03-05 Search (/, /pricing, goal Signup); V2 alice 03-20
 * Direct (/pricing); V3 bob 03-10 Communities, campaign launch (/blog,
 * /pricing); V4 carol 03-12 AI (/, outbound click); V5 dave 02-15 Social (/).
 *
 * Payments: P1 alice 03-20 09:10Z 49 USD (cus_a); P2 bob 03-10 100 EUR
 * refunded 20 (cus_b); P3 renewal of cus_a 03-25 49 USD, no visitor; P4 no
 * visitor 03-15 30 USD (cus_x); P5 carol failed 03-12 10 USD; P6 dave 02-15
 * 20 USD, no customer.
 */
export const NOW = Date.UTC(2026, 2, 31, 10);
export const SITE = 'shop.test';

const at = (iso: string) => Date.parse(iso);
const ev = (id: string, visitor: string, iso: string, o: Partial<TrackedEvent> = {}) =>
  trackedEvent({ event_id: id, site: SITE, hostname: SITE, visitor_id: visitor, ts: at(iso), ...o });

const SEARCH = { channel: 'Search', source: 'Google', referrer_host: 'www.google.com' };
export const EVENTS: TrackedEvent[] = [
  ev('v1a', 'alice-0001', '2026-03-05T10:00:00Z', { ...SEARCH, path: '/' }),
  ev('v1b', 'alice-0001', '2026-03-05T10:05:00Z', { ...SEARCH, path: '/pricing' }),
  ev('v1c', 'alice-0001', '2026-03-05T10:06:00Z', { ...SEARCH, path: '/pricing', type: 'goal', goal: 'Signup' }),
  ev('v2a', 'alice-0001', '2026-03-20T09:00:00Z', { path: '/pricing' }),
  ev('v3a', 'bob-00000001', '2026-03-10T15:00:00Z', {
    channel: 'Communities',
    source: 'Hacker News',
    referrer_host: 'news.ycombinator.com',
    utm_campaign: 'launch',
    path: '/blog',
    device: 'Mobile',
    browser: 'Safari',
    os: 'iOS',
    country: 'US',
  }),
  ev('v3b', 'bob-00000001', '2026-03-10T15:03:20Z', {
    path: '/pricing',
    device: 'Mobile',
    browser: 'Safari',
    os: 'iOS',
    country: 'US',
  }),
  ev('v4a', 'carol-000001', '2026-03-12T08:00:00Z', {
    channel: 'AI',
    source: 'ChatGPT',
    referrer_host: 'chatgpt.com',
    path: '/',
    country: 'FR',
    browser: 'Firefox',
    os: 'Linux',
  }),
  ev('v4b', 'carol-000001', '2026-03-12T08:01:00Z', {
    type: 'goal',
    goal: 'Outbound Link: Click',
    link: 'https://github.com/x',
    path: '/',
    country: 'FR',
    browser: 'Firefox',
    os: 'Linux',
  }),
  ev('v5a', 'dave-0000001', '2026-02-15T12:00:00Z', {
    channel: 'Social',
    source: 'X',
    referrer_host: 't.co',
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
export const PAYMENTS: PaymentFact[] = [
  pay({ id: 'pi_1', ts: at('2026-03-20T09:10:00Z'), amount: 4900, customer_id: 'cus_a', visitor_id: 'alice-0001' }),
  pay({
    id: 'pi_2',
    ts: at('2026-03-10T15:30:00Z'),
    amount: 10000,
    currency: 'EUR',
    customer_id: 'cus_b',
    visitor_id: 'bob-00000001',
  }),
  { provider: 'stripe', id: 'pi_2', aliases: [], refunded: 2000 },
  pay({ id: 'in_3', ts: at('2026-03-25T06:00:00Z'), amount: 4900, customer_id: 'cus_a', is_renewal: true }),
  pay({ id: 'pi_4', ts: at('2026-03-15T12:00:00Z'), amount: 3000, customer_id: 'cus_x' }),
  pay({
    id: 'pi_5',
    ts: at('2026-03-12T08:30:00Z'),
    amount: 1000,
    customer_id: 'cus_c',
    visitor_id: 'carol-000001',
    status: 'failed',
  }),
  pay({ id: 'pi_6', ts: at('2026-02-15T12:20:00Z'), amount: 2000, visitor_id: 'dave-0000001' }),
];

/** The local service in app mode with the scenario loaded, two accounts and their keys. */
export async function scenarioService() {
  const svc = await startTestService(
    [
      { domain: SITE, timezone: 'Europe/Berlin' },
      { domain: 'empty.test', timezone: 'UTC' },
    ],
    { app: true, clock: () => NOW },
  );
  const config = new DynamoConfigStore(svc.dynamo);
  await config.addAccount('rival', new Date());
  await config.addSite({
    domain: 'rival.test',
    timezone: 'UTC',
    account: 'rival',
    attribution: 'last_non_direct',
    lookback_days: 30,
    rate_limit: 1000,
    created: new Date().toISOString(),
  });
  const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
  await stream.put(EVENTS);
  await stream.close();
  await svc.sessionize();
  const site = (await config.getSite(SITE))!;
  const deps = dynamoPaymentDeps(svc.dynamo, () => NOW);
  for (const fact of PAYMENTS)
    await applyProviderFacts(deps, site, {
      event_id: 'e',
      event_type: 't',
      payments: [fact],
      subscriptions: [],
      customers: [],
    });
  const keys = new DynamoKeyStore(svc.dynamo);
  const key = (await keys.create('acme', 'tests', new Date())).key;
  const rival = await keys.create('rival', null, new Date());
  const get = (path: string, k: string | null = key) =>
    fetch(`${svc.url}${path}`, { headers: k ? { authorization: `Bearer ${k}` } : {} });
  return { svc, key, rivalKey: rival.key, rivalId: rival.id, keys, get };
}
