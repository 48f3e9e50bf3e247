import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIMENSIONS, RollupDeltas, paymentDimensionsOf } from '../lambdas/domain/rollup.js';
import { changeVisits } from '../lambdas/services/sessionize.js';
import type { Visit } from '../lambdas/domain/visit.js';
import { touchOf, firstTouchOf } from '../lambdas/domain/payments/attribution.js';
import { emptyPayment, type Payment } from '../lambdas/domain/payments/payment.js';
import { addDays, dayStart, localDay } from '../lambdas/domain/range.js';
import { createDynamoConnection, type DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { CapacityMeter, totalOf } from '../lambdas/adapters/dynamo/capacity-meter.js';
import { ensureTable, PK, SK } from '../lambdas/adapters/dynamo/table.js';
import { batchWrite } from '../lambdas/adapters/dynamo/batch.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoReportStore } from '../lambdas/adapters/dynamo/report-store.js';
import { mergeRollupItem, rollupPk, rollupSk } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoPaymentStore } from '../lambdas/adapters/dynamo/payment-store.js';
import { visitToItems } from '../lambdas/adapters/dynamo/visit-store.js';
import { breakdown, goals, listPayments, overview, realtime, retention, timeseries, visitorTimeline, type ReportDeps } from '../lambdas/services/reports.js';
import { DynamoRealtimeStore } from '../lambdas/adapters/dynamo/realtime-store.js';
import { minuteOf, type RealtimeSlice } from '../lambdas/domain/realtime.js';
import { createArchiveConsumer } from '../local/archive.js';
import { compareAnswers, openDuckBaseline, type DuckAnswer } from './duckdb-baseline.js';
import { startMemoryDynalite } from '../local/dynalite.js';
import { toSequenceNumber } from '../lambdas/adapters/local-stream.js';
import { batches } from './sessionize.js';
import { trafficStream } from './traffic.js';
import { rng } from '../local/demo/workload.js';
import { percentile, type Figure } from './report.js';

const SITE = 'shop.example';
/** The bench site's USD rate: EUR at 1.16, USD itself. */
const rate = (currency: string) => (currency === 'EUR' ? 1.16 : null);
const TZ = 'Europe/Berlin';
/**
 * How far Footfall's distinct visitors may be from DuckDB's exact count: 3 standard errors of the
 * HyperLogLog (3 × 0.81%, `lambdas/domain/visitor-sketch.ts`, docs/data-model.md).
 */
const VISITOR_TOLERANCE = 0.0243;

/**
 * The report benchmark of issue 5: a site with a year of traffic (about 1M
 * visits, 3M page views) and `FOOTFALL_BENCH_PAYMENTS` payments (20,000 by default). The year goes through the pure
 * sessionizer and the payment rules in memory, and the resulting items — the
 * same keys and contents the sessionizer and the payment service write — are
 * loaded into dynalite in bulk (sessionizing 3.4M events through dynalite one
 * batch at a time would take half an hour on this machine). The raw events go
 * to Parquet through the archive consumer, for the DuckDB comparison.
 */
export async function benchReports(totalEvents = 3_400_000): Promise<Figure[]> {
  const db = await startMemoryDynalite();
  const meter = new CapacityMeter();
  const conn = createDynamoConnection({ table: 'bench', endpoint: db.endpoint, capacityMeter: meter });
  await ensureTable(conn);
  const config = new DynamoConfigStore(conn);
  const archiveDir = await mkdtemp(join(tmpdir(), 'ff-bench-archive-'));
  const { now, watched, visits, pageviews, payments } = await loadBenchSite(conn, totalEvents, archiveDir);

  // 4. The reports, timed, with their DynamoDB requests and bytes.
  const figures: Figure[] = [
    { section: 'reports', name: 'bench site: visits', value: visits, unit: 'visits' },
    { section: 'reports', name: 'bench site: page views', value: pageviews, unit: 'page views' },
    { section: 'reports', name: 'bench site: payments', value: payments, unit: 'payments' },
  ];
  const fx = async () => (currency: string) => rate(currency);
  // Each report five times: the median time; requests, response bytes and RRU counted at the SDK client (CapacityMeter).
  const measure = async (name: string, run: (deps: ReportDeps) => Promise<unknown>, targets = true) => {
    const times: number[] = [];
    let cost = totalOf({});
    for (let i = 0; i < 5; i++) {
      const store = new DynamoReportStore(conn);
      const t0 = process.hrtime.bigint();
      cost = (await meter.measure(() => run({ sites: config, store, rates: fx, clock: () => now }))).total;
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const ms = percentile(times, 50);
    figures.push(
      { section: 'reports', name: `${name}: ms`, value: ms, unit: 'ms' },
      { section: 'reports', name: `${name}: DynamoDB requests`, value: cost.requests, unit: 'requests', target: targets ? '≤ 25' : undefined },
      { section: 'reports', name: `${name}: bytes received`, value: cost.bytesReceived / 1e6, unit: 'MB', target: targets ? '≤ 4' : undefined },
      { section: 'reports', name: `${name}: RRU`, value: cost.rcu, unit: 'RRU' },
    );
    return ms;
  };
  // Every report the dashboard, the API and MCP answer, at 7d, 30d and 12m.
  for (const range of ['7d', '30d', '12m'] as const) {
    await measure(`overview ${range}`, (deps) => overview(deps, 'bench', SITE, { range }));
    for (const dimension of DIMENSIONS) await measure(`breakdown ${dimension} ${range}`, (deps) => breakdown(deps, 'bench', SITE, dimension, { range }, 100));
    // By day, as the dashboard charts every range.
    await measure(`timeseries ${range} by day`, (deps) => timeseries(deps, 'bench', SITE, { range }, 'day'));
    await measure(`payments ${range}, page 1`, (deps) => listPayments(deps, 'bench', SITE, { range }, 'all', 20, 0));
    await measure(`payments ${range}, page 2`, (deps) => listPayments(deps, 'bench', SITE, { range }, 'all', 20, 20));
    await measure(`retention ${range}`, (deps) => retention(deps, 'bench', SITE, { range }));
    await measure(`goals ${range}`, (deps) => goals(deps, 'bench', SITE, { range }, null, 100));
    await measure(`goals outbound links ${range}`, (deps) => goals(deps, 'bench', SITE, { range }, 'Outbound Link: Click', 100));
  }
  // Realtime: 6 minutes of 5-second batches, 20 current visitors each, as the sessionizer writes them
  // (an upper bound: the stack's 60 s batching window writes 6-12 items in 6 minutes).
  await loadRealtime(conn, now);
  await measure('realtime (72 batch items)', (deps) => realtime(deps, 'bench', SITE, 10));
  await measure('timeseries 12m by month', (deps) => timeseries(deps, 'bench', SITE, { range: '12m' }, 'month'));
  await measure('timeseries today by hour', (deps) => timeseries(deps, 'bench', SITE, { range: 'today' }, 'hour'));
  await measure('visitor timeline', (deps) => visitorTimeline(deps, 'bench', SITE, watched ?? ''));

  // 5. The same numbers from the raw Parquet with DuckDB, as an analyst writes it (`bench/duckdb-baseline.ts`):
  //    one connection, best of five against Footfall's best of five, answers compared number by number.
  const duck = await openDuckBaseline(archiveDir, SITE, TZ);
  try {
    for (const range of ['30d', '12m'] as const) {
      const deps: ReportDeps = { sites: config, store: new DynamoReportStore(conn), rates: fx, clock: () => now };
      let footfallBest = Infinity;
      let duckBest = Infinity;
      let ours: DuckAnswer | null = null;
      let theirs: DuckAnswer | null = null;
      for (let i = 0; i < 5; i++) {
        const t0 = process.hrtime.bigint();
        const [o, c] = await Promise.all([overview(deps, 'bench', SITE, { range }), breakdown(deps, 'bench', SITE, 'channel', { range }, 100)]);
        footfallBest = Math.min(footfallBest, Number(process.hrtime.bigint() - t0) / 1e6);
        ours = { visitors: o.current.visitors, sessions: o.current.sessions, channels: Object.fromEntries(c.rows.filter((r) => !r.unattributed).map((r) => [r.label, r.visitors])) };
        const run = await duck.run(o.range.from, o.range.to);
        duckBest = Math.min(duckBest, run.ms);
        theirs = run.answer;
      }
      const differences = compareAnswers(ours as DuckAnswer, theirs as DuckAnswer, VISITOR_TOLERANCE);
      if (differences.length > 0) throw new Error(`Footfall and DuckDB disagree on ${range}:\n${differences.join('\n')}`);
      figures.push(
        { section: 'reports', name: `${range}: visitors, sessions, visits by channel (Footfall = DuckDB)`, value: (theirs as DuckAnswer).sessions, unit: 'sessions' },
        { section: 'reports', name: `Footfall overview + channel breakdown ${range}, best of 5: ms`, value: footfallBest, unit: 'ms' },
        { section: 'reports', name: `DuckDB over the Parquet archive, partition-pruned, ${range}, best of 5: ms`, value: duckBest, unit: 'ms' },
        { section: 'reports', name: `speed-up over DuckDB, ${range}`, value: duckBest / footfallBest, unit: '×' },
      );
    }
  } finally {
    duck.close();
  }
  conn.doc.destroy();
  await db.close();
  await rm(archiveDir, { recursive: true, force: true });
  return figures;
}

/**
 * Payments a year of the bench site: `FOOTFALL_BENCH_PAYMENTS`, one of the scale points 20000
 * (default), 100000 or 1000000 (issue 15.5).
 * @throws Error for any other value
 */
export function paymentTarget(raw = process.env.FOOTFALL_BENCH_PAYMENTS ?? '20000'): number {
  const n = Number(raw);
  if (![20_000, 100_000, 1_000_000].includes(n)) throw new Error(`FOOTFALL_BENCH_PAYMENTS must be 20000, 100000 or 1000000; got '${raw}'`);
  return n;
}

/** What `loadBenchSite` wrote: the site, its account, the time its year ends (ms), and its size. */
export interface BenchSite {
  site: string;
  account: string;
  now: number;
  watched: string | null;
  visits: number;
  pageviews: number;
  payments: number;
}

/**
 * Realtime items of the bench site: one per 5-second batch over the 6 minutes
 * before `now`, each with 20 visitors on 3 pages (what the sessionizer writes
 * at ~4 events a second; `docs/api.md` "Realtime").
 */
async function loadRealtime(conn: DynamoConnection, now: number): Promise<void> {
  const store = new DynamoRealtimeStore(conn);
  for (let batch = 0; batch < 72; batch++) {
    const ts = now - 360_000 + batch * 5_000;
    const visitors: RealtimeSlice['visitors'] = {};
    for (let i = 0; i < 20; i++) visitors[`rt-visitor-${(batch * 7 + i) % 300}`] = [ts, i % 4 === 0 ? 'www.google.com' : null, ['/', `/blog/post-${i % 3}`]];
    await store.write([{ site: SITE, minute: minuteOf(ts), visitors }], { shard: 'shardId-0', sequence: String(batch) });
  }
}

/**
 * Writes the bench site into the (existing) table of `conn`: account `bench`,
 * site `shop.example`, and the items the sessionizer and the payment service
 * would leave after a year of `totalEvents` events and `paymentTarget()` payments of subscribing customers. With
 * `archiveDir`, the raw events also go to Parquet there (for DuckDB).
 */
export async function loadBenchSite(conn: DynamoConnection, totalEvents: number, archiveDir?: string): Promise<BenchSite> {
  const config = new DynamoConfigStore(conn);
  await config.addAccount('bench', new Date());
  await config.addSite({ domain: SITE, timezone: TZ, account: 'bench', attribution: 'last_non_direct', lookback_days: 30, rate_limit: 1000, created: new Date().toISOString() });
  const archive = archiveDir ? createArchiveConsumer(archiveDir) : null;
  const random = rng(99);

  // 1. A year of events: visits and rollups in memory, raw events to Parquet.
  const deltas = new RollupDeltas();
  const latest = new Map<string, Visit>();
  const keep: Visit[] = [];
  let watched: string | null = null;
  const watchedVisits = new Map<string, Visit>();
  let visits = 0;
  let pageviews = 0;
  let sequence = 0;
  // Exactly the 365 days ending today (site-local): from midnight 364 days ago until now.
  const now = Date.now();
  const from = dayStart(addDays(localDay(now, TZ), -364), TZ);
  for (const batch of batches(trafficStream({ site: SITE, from, to: now, eventsPerMonth: (totalEvents * 30) / 365, seed: 3 }), 50_000)) {
    await archive?.(batch.map((e) => ({ sequenceNumber: toSequenceNumber(++sequence), partitionKey: '', approximateArrivalTimestamp: e.ts, data: Buffer.from(JSON.stringify(e)) })));
    const byVisitor = new Map<string, typeof batch>();
    for (const e of batch) {
      const list = byVisitor.get(e.visitor_id);
      if (list) list.push(e);
      else byVisitor.set(e.visitor_id, [e]);
    }
    for (const [visitor, events] of byVisitor) {
      watched ??= visitor;
      const before = latest.get(visitor);
      const change = changeVisits(SITE, visitor, before ? [before] : [], events);
      for (const v of change.before) deltas.addVisit(v, TZ, -1);
      for (const v of change.after) deltas.addVisit(v, TZ, 1);
      for (const e of events) deltas.addActivity(SITE, visitor, e.ts, TZ);
      visits += change.after.length - change.before.length;
      const newest = change.after[change.after.length - 1];
      if (newest) latest.set(visitor, newest);
      if (visitor === watched) {
        for (const v of change.before) watchedVisits.delete(v.id);
        for (const v of change.after) watchedVisits.set(v.id, v);
      }
      for (const v of change.after) if (random() < 0.02) keep.push(v);
    }
    pageviews += batch.filter((e) => e.type === 'pageview').length;
  }
  await archive?.close();

  // 2. Rollup items as the sessionizer leaves them.
  const items: Array<Record<string, unknown>> = [];
  for (const d of deltas.list()) {
    const key = { [PK]: rollupPk(d.key.site, d.key.metric), [SK]: rollupSk(d.key.granularity, d.key.period, d.key.bucket) };
    items.push({ ...key, type: 'ROLLUP', ...mergeRollupItem(undefined, d), seq: { bench: '1' }, ver: 1 });
  }
  // 3. Payments of customers with monthly subscriptions: a customer's first payment follows a
  //    sampled visit (the visits spread over the whole year), renewals every 30 days until the
  //    customer cancels (6% a month) or the year ends, so the last 30 days have payments too;
  //    3% refunded in full, 30% in EUR, 10% not attributed to a visit.
  const wanted = paymentTarget();
  const payments: Payment[] = [];
  const starters = keep.length;
  for (let c = 0; payments.length < wanted && starters > 0; c++) {
    const v = keep[Math.floor(random() * starters)] as Visit;
    const credited = random() > 0.1;
    const eur = random() < 0.3;
    for (let k = 0, ts = v.end + 5 * 60_000; ts < now && payments.length < wanted; k++, ts += 30 * 86_400_000) {
      const p = emptyPayment(SITE, 'stripe', `pi_bench_${payments.length}`);
      const refunded = random() < 0.03;
      payments.push({
        ...p,
        ts,
        amount: eur ? 2500 : 4900,
        currency: eur ? 'EUR' : 'USD',
        refunded: refunded ? (eur ? 2500 : 4900) : 0,
        status: 'paid',
        customer_id: `cus_${c}`,
        visitor_id: v.visitor_id,
        is_renewal: k > 0,
        visitor: credited ? v.visitor_id : null,
        touch: credited ? touchOf(v) : null,
        touch_dims: credited ? paymentDimensionsOf(v) : null,
        first_touch: credited ? firstTouchOf(v) : null,
        rev: 1,
      });
      if (random() < 0.06) break;
    }
  }
  for (const v of watchedVisits.values()) items.push(...visitToItems(v));
  await batchWrite(conn, items.map((Item) => ({ PutRequest: { Item } })));
  // Payments, their timeline copies, list items and counters: the items settling them leaves.
  await new DynamoPaymentStore(conn).bulkLoad(SITE, TZ, payments, rate);
  return { site: SITE, account: 'bench', now, watched, visits, pageviews, payments: payments.length };
}
