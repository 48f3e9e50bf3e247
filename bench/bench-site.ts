import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { dynamoPaymentListLayout } from '../lambdas/adapters/dynamo/payments/payment-list-layout.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { batchWrite } from '../lambdas/adapters/dynamo/batch.js';
import { dynamoPaymentStores } from '../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { toSequenceNumber } from '../lambdas/adapters/local-stream.js';
import { sessionizeBatch, type SessionizeDeps, type SessionizeRecord } from '../lambdas/services/sessionize.js';
import { applyProviderFacts, type PaymentDeps } from '../lambdas/services/payments.js';
import { namespaceOf, type SiteConfig } from '../lambdas/domain/site.js';
import { addDays, dayStart, localDay } from '../lambdas/domain/range.js';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import type { UsdRate } from '../lambdas/domain/payments/money.js';
import type { Visit } from '../lambdas/domain/visit.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import { createArchiveConsumer } from '../local/archive.js';
import { rng } from '../local/demo/workload.js';
import { EVENTS_PER_VISIT, trafficStream } from './traffic.js';
import { MemoryPaymentStore, MemoryRollupStore, MemoryVisitStore } from './memory-stores.js';

/**
 * The report benchmark's site (`docs/benchmarks.md` "Budgets"): exactly the 365 days ending now
 * (site-local) of `bench/traffic.ts` traffic, and the payments of customers
 * with monthly subscriptions, written into a table as the product leaves
 * them:
 *
 * - **Visits and rollups** come from the real sessionizer (`sessionizeBatch`)
 *   over the stream in batches of `batchEvents`, against in-memory stores:
 *   the rollup deltas are folded into their items as the compactor folds
 *   the log (`MemoryRollupStore`), and the items written once at the end
 *   with BatchWriteItem. In `MemoryVisitStore` a visit no later event can
 *   touch is dropped,
 *   except those of the visitors chosen as payers, whose visits their
 *   payments are credited to. VISIT items are written for one visitor only
 *   (`watched`, the visitor timeline's): no report reads the others.
 * - **Payments and customers** go through the real payment service
 *   (`applyProviderFacts`, the webhook path) against `MemoryPaymentStore`:
 *   a payer's first payment follows one of their visits (sampled over the
 *   whole year), renewals every 30 days until the customer cancels (6% a
 *   month: a `canceled` subscription fact) or the year ends, so the last 30
 *   days have payments; 3% refunded in full a few days later, 30% in EUR, 10%
 *   without a visitor id (not attributed). Every `paymentChunk` payments
 *   (a batch of whole customers: a customer's webhooks touch only its own
 *   payments, so once applied they are final) the PAYMENT and CUSTOMER
 *   items, timeline copies, list and payer items are written with the
 *   stores' bulk paths (`bulkLoadCustomers`, then a chunk of
 *   `DynamoPaymentBulkLoads.bulkLoader`) and dropped from memory; every day's
 *   and month's counters and the cohorts are recomputed once at the end.
 *   Payment aliases (webhook lookups, read by no report) are not written.
 *
 * `test/bench/bench-site.test.ts` loads a small site both this way and
 * through DynamoDB with the sessionizer in small batches and webhooks one
 * by one, and compares the tables item by item.
 *
 * Memory: the visits of payers (about 2.5 × the payers needed) plus the
 * visits of the last two hours of traffic; one chunk of payments and
 * customers, and the bulk load's visitors, payer keys and days.
 */
export interface BenchSiteOptions {
  /** Events over the range (about 2.34 per visit). */
  events: number;
  /** Payments over the range (first payments and renewals; refunds are changes of these). */
  payments: number;
  /** Length of the range in site-local days ending today; default 365. */
  days?: number;
  /** The end of the range, ms since epoch; default now. */
  now?: number;
  /** Where the raw events go as Parquet (the DuckDB baseline); none by default. */
  archiveDir?: string;
  /** Events per sessionizer batch; default 20,000. */
  batchEvents?: number;
  /** Progress lines (to stderr in the bench). */
  log?: (line: string) => void;
  /**
   * Payments held in memory before they are written and dropped (a batch of
   * whole customers, so a little more); default 20,000. The equality test
   * sets it small to cross many chunk boundaries.
   */
  paymentChunk?: number;
  /** Called with each webhook's facts as the payment service takes them (the equality test replays them). */
  onWebhook?: (facts: ProviderFacts) => void;
}

/** What `loadBenchSite` wrote: the site, its account, the time its range ends (ms), and its size. */
export interface BenchSite {
  site: string;
  account: string;
  now: number;
  /** A payer whose visits are stored (the visitor timeline's subject). */
  watched: string | null;
  visits: number;
  pageviews: number;
  payments: number;
  customers: number;
  /** Time spent per phase, ms: the payments' is the payment service's, the write's the bulk path's (the two alternate, a batch of customers at a time). */
  ms: { sessionize: number; payments: number; write: number };
  /** The largest V8 heap in use seen after a batch of payments was written, bytes (`process.memoryUsage().heapUsed`). */
  peakHeapBytes: number;
}

export const BENCH_SITE = 'shop.example';
export const BENCH_ACCOUNT = 'bench';
export const BENCH_TIMEZONE = 'Europe/Berlin';
/** The bench site's USD rates: EUR at 1.16 (USD needs none). */
export const benchRate: UsdRate = (currency) => (currency === 'EUR' ? 1.16 : null);

const DAY_MS = 86_400_000;
/** Events arrive at most this late in `bench/traffic.ts` (2% up to 20 minutes), plus the 30-minute visit gap, with margin. */
const EVICT_AFTER_MS = 2 * 3_600_000;
/** Mean visits per visitor of the traffic model (Zipf 2.5). */
const VISITS_PER_VISITOR = 1.9;
/**
 * Mean payments per customer of the subscription model over `days` (6% monthly churn, first
 * payments spread over the range): about 5 over a year, fewer over shorter ranges.
 */
const paymentsPerCustomer = (days: number) => Math.min(5, 1 + days / 60);
/** Payers chosen per payer needed, so that the payments target is reached. */
const PAYER_HEADROOM = 2.5;

/** 32-bit FNV-1a of a string, as a fraction in [0, 1). */
function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

/** The share of visitors kept as possible payers so that `payments` payments can be made over `days`. */
export function payerShare(events: number, payments: number, days: number): number {
  const visitors = events / EVENTS_PER_VISIT / VISITS_PER_VISITOR;
  return Math.min(1, (PAYER_HEADROOM * payments) / paymentsPerCustomer(days) / Math.max(1, visitors));
}

/** The bench site's configuration as `addSite` stores it (attribution: last non-direct in 30 days). */
export function benchSiteConfig(created: string): SiteConfig {
  return {
    domain: BENCH_SITE,
    timezone: BENCH_TIMEZONE,
    account: BENCH_ACCOUNT,
    attribution: 'last_non_direct',
    lookback_days: 30,
    rate_limit: 1000,
    created,
  };
}

/**
 * The webhooks of one customer's subscription, in the order a provider
 * sends them (Stripe-shaped facts): the checkout (customer with its visitor,
 * subscription active, first payment), each renewal, refunds, and the
 * cancellation. `n` numbers the customer's payments from `firstPayment`.
 */
export function subscriptionWebhooks(
  customer: string,
  visit: Pick<Visit, 'visitor_id' | 'end'>,
  now: number,
  random: () => number,
  paymentsLeft: number,
  firstPayment: number,
): ProviderFacts[] {
  const credited = random() > 0.1;
  const eur = random() < 0.3;
  const amount = eur ? 2500 : 4900;
  const currency = eur ? 'EUR' : 'USD';
  const subscription = `sub_${customer}`;
  const out: Array<{ ts: number; facts: ProviderFacts }> = [];
  const webhook = (ts: number, type: string, facts: Partial<ProviderFacts>) =>
    out.push({
      ts,
      facts: {
        event_id: `evt_${customer}_${out.length}`,
        event_type: type,
        payments: [],
        subscriptions: [],
        customers: [],
        ...facts,
      },
    });
  let ts = visit.end + 5 * 60_000;
  for (let k = 0; ts < now && k < paymentsLeft; k++, ts += 30 * DAY_MS) {
    const id = `pi_bench_${firstPayment + k}`;
    const payment = {
      provider: 'stripe' as const,
      id,
      aliases: [`in_bench_${firstPayment + k}`],
      ts,
      amount,
      currency,
      status: 'paid' as const,
      customer_id: customer,
      subscription_id: subscription,
      is_renewal: k > 0,
    };
    if (k === 0) {
      webhook(ts, 'checkout.session.completed', {
        customers: credited ? [{ provider: 'stripe', customer_id: customer, visitor_id: visit.visitor_id }] : [],
        subscriptions: [
          {
            provider: 'stripe',
            subscription_id: subscription,
            customer_id: customer,
            status: 'active',
            paying: true,
            ts,
          },
        ],
        payments: [credited ? { ...payment, visitor_id: visit.visitor_id } : payment],
      });
    } else webhook(ts, 'invoice.paid', { payments: [payment] });
    if (random() < 0.03) {
      const at = ts + (1 + random() * 6) * DAY_MS;
      if (at < now)
        webhook(at, 'charge.refunded', {
          payments: [{ provider: 'stripe', id, aliases: [], refunded: amount, status: 'refunded' }],
        });
    }
    if (random() < 0.06) {
      const at = ts + (1 + random() * 28) * DAY_MS;
      if (at < now)
        webhook(at, 'customer.subscription.deleted', {
          subscriptions: [
            {
              provider: 'stripe',
              subscription_id: subscription,
              customer_id: customer,
              status: 'canceled',
              paying: false,
              ts: at,
            },
          ],
        });
      break;
    }
  }
  return out.sort((a, b) => a.ts - b.ts).map((w) => w.facts);
}

/**
 * The bench site's events in arrival order (`trafficStream`, seed 3): `events` spread over the
 * `days` site-local days ending with the one of `now` (from its midnight until `now`).
 */
export function benchTraffic(events: number, now: number, days = 365): Generator<TrackedEvent> {
  const from = dayStart(addDays(localDay(now, BENCH_TIMEZONE), -(days - 1)), BENCH_TIMEZONE);
  return trafficStream({ site: BENCH_SITE, from, to: now, eventsPerMonth: (events * 30) / days, seed: 3 });
}

/** Payments (first and renewals) among a customer's webhooks. */
export const paymentsIn = (webhooks: readonly ProviderFacts[]) =>
  webhooks.reduce((n, w) => n + w.payments.filter((p) => p.amount !== undefined).length, 0);

/**
 * Writes the bench site into the (existing) table of `conn` (see the
 * module's doc): account `bench`, site `shop.example`.
 * @throws Error when the traffic has too few payers for `payments`
 */
export async function loadBenchSite(conn: DynamoConnection, options: BenchSiteOptions): Promise<BenchSite> {
  const log = options.log ?? (() => undefined);
  const config = new DynamoConfigStore(conn);
  await config.addAccount(BENCH_ACCOUNT, new Date());
  await config.addSite(benchSiteConfig(new Date().toISOString()));
  const site = (await config.getSite(BENCH_SITE)) as SiteConfig;
  const ns = namespaceOf(site);
  const now = options.now ?? Date.now();
  const share = payerShare(options.events, options.payments, options.days ?? 365);
  const isPayer = (visitorId: string) => hashFraction(visitorId) < share;

  // 1. The stream through the sessionizer; raw events to Parquet.
  const started = Date.now();
  const visitStore = new MemoryVisitStore(isPayer);
  const rollups = new MemoryRollupStore();
  const deps: SessionizeDeps = {
    sites: { getSite: async (domain) => (domain === site.domain ? site : null) },
    visits: visitStore,
    rollups,
  };
  const archive = options.archiveDir ? createArchiveConsumer(options.archiveDir) : null;
  const batchEvents = options.batchEvents ?? 20_000;
  let records: Array<SessionizeRecord & { partitionKey: string; approximateArrivalTimestamp: number }> = [];
  let sequence = 0;
  let batch = 0;
  let visits = 0;
  let pageviews = 0;
  let latest = 0;
  const flush = async () => {
    if (records.length === 0) return;
    await archive?.(records);
    const outcome = await sessionizeBatch(
      deps,
      { shard: 'shardId-000000000000', sequence: (records[records.length - 1] as SessionizeRecord).sequenceNumber },
      records,
    );
    visits += outcome.visitsWritten - outcome.visitsRemoved;
    records = [];
    if (++batch % 50 === 0) {
      log(
        `bench site: ${sequence.toLocaleString('en-US')} events, ${visits.toLocaleString('en-US')} visits, ${visitStore.size.toLocaleString('en-US')} visitors in memory, ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB heap`,
      );
    }
    visitStore.evictEndedBefore(latest - EVICT_AFTER_MS);
  };
  for (const e of benchTraffic(options.events, now, options.days)) {
    if (e.type === 'pageview') pageviews++;
    if (e.ts > latest) latest = e.ts;
    records.push({
      sequenceNumber: toSequenceNumber(++sequence),
      partitionKey: e.visitor_id,
      approximateArrivalTimestamp: e.ts,
      data: Buffer.from(JSON.stringify(e)),
    });
    if (records.length >= batchEvents) await flush();
  }
  await flush();
  await archive?.close();
  await batchWrite(
    conn,
    [...rollups.rollupItems()].map((Item) => ({ PutRequest: { Item } })),
  );
  log(`bench site: ${rollups.size.toLocaleString('en-US')} rollup items written`);
  const sessionized = Date.now();

  // 2. Payments: each payer's subscription webhooks through the payment service, in memory, a batch of
  // customers at a time; 3. each batch written with the DynamoDB stores' bulk path (in chunks) and dropped.
  const payments = new MemoryPaymentStore();
  const paymentDeps: PaymentDeps = {
    ...payments.ports(),
    list: dynamoPaymentListLayout,
    visits: visitStore,
    rates: async () => benchRate,
    clock: () => now,
  };
  const store = dynamoPaymentStores(conn);
  const load = store.bulk.bulkLoader(ns, site.timezone, benchRate, { now });
  const chunk = options.paymentChunk ?? 20_000;
  const random = rng(99);
  const payers: string[] = [];
  for (const visitor of visitStore.visitors(ns)) if (isPayer(visitor)) payers.push(visitor);
  payers.sort();
  for (let i = payers.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [payers[i], payers[j]] = [payers[j] as string, payers[i] as string];
  }
  let made = 0;
  let customers = 0;
  let written = 0;
  let watched: string | null = null;
  const timing = { payments: 0, write: 0 };
  let peakHeap = process.memoryUsage().heapUsed;
  // A customer's webhooks refer to its own payments and subscription only, so once they are applied its
  // payments and customer are final: write them (customers first: the bulk path's finish reads them).
  const writeOut = async () => {
    const startedWrite = Date.now();
    const out = payments.drain();
    await store.customers.bulkLoadCustomers(out.customers);
    await load.add(out.payments);
    for (const p of out.pending) await store.pending.markPending(p.site, p.payment, p.until);
    written += out.payments.length;
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    timing.write += Date.now() - startedWrite;
    log(
      `bench site: ${written.toLocaleString('en-US')} payments written, ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB heap`,
    );
  };
  for (const visitor of payers) {
    if (made >= options.payments) break;
    const own = visitStore.visitsOf(ns, visitor);
    const visit = own[Math.floor(random() * own.length)];
    if (!visit || visit.end + 5 * 60_000 >= now) continue;
    const startedPayer = Date.now();
    const webhooks = subscriptionWebhooks(`cus_${customers}`, visit, now, random, options.payments - made, made);
    for (const w of webhooks) {
      options.onWebhook?.(w);
      await applyProviderFacts(paymentDeps, site, w);
    }
    timing.payments += Date.now() - startedPayer;
    made += paymentsIn(webhooks);
    customers++;
    watched ??= visitor;
    if (payments.payments.size >= chunk) await writeOut();
  }
  if (made < options.payments)
    throw new Error(
      `bench site: ${payers.length} payers made ${made} of ${options.payments} payments; raise PAYER_HEADROOM`,
    );
  await writeOut();
  const finishing = Date.now();
  await load.finish();
  timing.write += Date.now() - finishing;
  log(
    `bench site: ${written.toLocaleString('en-US')} payments and ${customers.toLocaleString('en-US')} customers written`,
  );
  if (watched) await new DynamoVisitStore(conn).writeVisits(visitStore.visitsOf(ns, watched), []);
  return {
    site: BENCH_SITE,
    account: BENCH_ACCOUNT,
    now,
    watched,
    visits,
    pageviews,
    payments: written,
    customers,
    ms: { sessionize: sessionized - started, payments: timing.payments, write: timing.write },
    peakHeapBytes: peakHeap,
  };
}
