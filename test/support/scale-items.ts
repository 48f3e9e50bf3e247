import { expect } from 'vitest';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import {
  contributionOf,
  counts,
  UNATTRIBUTED_KEY,
  type Contribution,
} from '../../lambdas/domain/payments/contribution.js';
import { emptyPayment, type Payment } from '../../lambdas/domain/payments/payment.js';
import {
  DIMENSIONS,
  PAYMENT_DIMENSIONS,
  NONE,
  type Dimension,
  type PaymentDimension,
  type RollupDelta,
} from '../../lambdas/domain/rollup.js';
import { addVisitors, countVisitors, emptySketch, unionSketches } from '../../lambdas/domain/visitor-sketch.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import { applyProviderFacts, type PaymentDeps } from '../../lambdas/services/payments.js';
import {
  breakdown,
  goals,
  listPayments,
  overview,
  retention,
  timeseries,
  type ReportDeps,
} from '../../lambdas/services/reports.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable } from './dynamo.js';
import { trackedEvent } from './events.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * Storage that scales (`docs/benchmarks.md` "Budgets"), shared by the test in `npm test`
 * (small sizes) and the reliability suite (full sizes): a month of
 * many payments loaded through the payment store's paths, a day of many
 * distinct page paths and referrers through the sessionizer and compactor,
 * every report compared with a direct computation and counted at the SDK
 * client (≤ 25 requests, ≤ 4 MB), every item read back within its bound.
 */

/** Each item type's bound in bytes as DynamoDB counts them (`docs/data-model.md`, item table and "Bounds of the rollup items"). */
export const ITEM_BOUNDS: Readonly<Record<string, number>> = {
  ACCOUNT: 1024,
  SITES: 2048,
  SALT: 1024,
  SHARD: 1024,
  VISIT: 2048 + 3072,
  VISIT_CHUNK: 4400,
  VISITOR_PAYMENT: 1024,
  // The visitor's payments marker: keys and `latest` (< 100 B of attributes).
  VISITOR_PAYMENTS: 200,
  // A recent raise of a visitor's marker: keys (a visitor id of ≤ 64 characters), `latest`, `expires_at`.
  RECENT_PAYMENT_MARK: 200,
  // Dimension parts: 32 KiB of values plus keys, `seq`, `ver`; `visits` items: 1,000 ids of ≤ 64 characters (packed, less).
  ROLLUP: 70_000,
  // A `visits` bucket's counts and distinct count: keys, two counts, three named counters, `u`, `seq` (~135 B a shard), `ver`.
  ROLLUP_COUNTS: 1024,
  ROLLUP_DELTA: 256 * 1024,
  ROLLUP_LOG_STATE: 1024,
  BATCH_MARKER: 1024,
  PAYMENT: 100_000,
  PAYMENT_ALIAS: 1024,
  CUSTOMER: 100_000,
  PAYMENT_LIST: 80_000,
  PAYMENT_LIST_REFUNDED: 200,
  PAYMENT_TOTALS: 24_000,
  PAYMENT_CUSTOMERS: 44_000,
  PAYMENT_DIMENSION: 32 * 1024 + 1024,
  PAYMENT_CHANGE: 100,
  PAYMENT_PENDING: 1024,
  PAYER_PAYMENT: 1024,
  PAYER_STATE: 200,
  COHORT_MEMBER: 1024,
  COHORT: 400 * 1024,
  COHORT_CHANGE: 100,
  COHORT_SOURCES: 200,
};

/** Dimension ROLLUP items (not `visits`, not `goal`): 32 KiB of values plus keys, `seq`, `ver`. */
const DIMENSION_ROLLUP_BYTES = 32 * 1024 + 1024;

/**
 * Scans the table and asserts every item's size against its type's bound (an
 * item of a type without a stated bound fails too).
 * @returns per type: items and the largest item's bytes
 */
export async function assertItemBounds(
  conn: DynamoConnection,
): Promise<Record<string, { items: number; max: number }>> {
  const out: Record<string, { items: number; max: number }> = {};
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table })) {
    for (const item of page.Items ?? []) {
      const metric = String(item.pk).split('#').at(-1);
      // Configuration items carry no `type`: named by their partition key's prefix.
      const type =
        item.type === 'ROLLUP' && metric !== 'visits' && metric !== 'goal'
          ? 'ROLLUP (dimension)'
          : String(item.type ?? String(item.pk).split('#')[0]);
      const bound = type === 'ROLLUP (dimension)' ? DIMENSION_ROLLUP_BYTES : ITEM_BOUNDS[type];
      const bytes = itemBytes(item);
      expect(bound, `a bound for ${type} (${String(item.pk)} ${String(item.sk)})`).toBeDefined();
      expect(bytes, `${type} ${String(item.pk)} ${String(item.sk)}`).toBeLessThanOrEqual(bound ?? 0);
      const entry = (out[type] ??= { items: 0, max: 0 });
      entry.items++;
      entry.max = Math.max(entry.max, bytes);
    }
  }
  return out;
}

/** The issue's per-report budget: requests and response bytes at the SDK client. */
export const REPORT_BUDGET = { requests: 25, bytes: 4 * 1024 * 1024 };

/** Runs a report with a fresh report store, counting its requests and bytes at the SDK client; asserts the budget. */
async function measured<T>(
  meter: CapacityMeter,
  name: string,
  conn: DynamoConnection,
  run: (deps: ReportDeps) => Promise<T>,
  now: number,
  costs: Record<string, { requests: number; bytes: number }>,
): Promise<T> {
  const deps: ReportDeps = {
    sites: new DynamoConfigStore(conn),
    store: new DynamoReportStore(conn),
    rates: async () => rate,
    clock: () => now,
  };
  const { result, total } = await meter.measure(() => run(deps));
  costs[name] = { requests: total.requests, bytes: total.bytesReceived };
  expect(total.requests, `${name}: requests`).toBeLessThanOrEqual(REPORT_BUDGET.requests);
  expect(total.bytesReceived, `${name}: bytes`).toBeLessThanOrEqual(REPORT_BUDGET.bytes);
  return result;
}

const rate = (currency: string) => (currency === 'EUR' ? 1.1 : null);
const DAY = 86_400_000;
const CHANNELS = ['Search', 'Direct', 'Social', 'AI', 'Referral'];
const MAY = Date.UTC(2026, 4, 1);
const NOW = Date.UTC(2026, 5, 10, 12);

/** Payment `i` of `n` in May 2026: attributed (4 in 5) to a visit with `values` distinct landing pages and referrers; some failed, refunded, in EUR; payers paying twice. */
function generatedPayment(site: string, i: number, n: number, values: number): Payment {
  const ts = MAY + Math.floor((i * 30 * DAY) / n) + ((i * 7919) % 3_600_000);
  const attributed = i % 5 !== 0;
  const landing = `/l/${String(i % values).padStart(6, '0')}`;
  const dims = Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, [] as string[]])) as Record<
    PaymentDimension,
    string[]
  >;
  const channel = CHANNELS[i % CHANNELS.length] ?? 'Direct';
  Object.assign(dims, {
    channel: [channel],
    referrer: [channel === 'Direct' ? NONE : `r${String(i % values).padStart(6, '0')}.example.net`],
    campaign: [i % 3 ? `spring-${i % 200}` : NONE],
    keyword: [NONE],
    landing_page: [landing],
    page: [landing, '/pricing'],
    country: [['US', 'DE', 'FR', 'JP'][i % 4] ?? 'US'],
    device: [i % 2 ? 'Desktop' : 'Mobile'],
    browser: ['Chrome'],
    os: [i % 2 ? 'Mac OS' : 'iOS'],
    language: ['en'],
    goal: i % 3 === 0 ? ['Signup'] : [],
  });
  return {
    ...emptyPayment(site, 'stripe', `pi_${String(i).padStart(7, '0')}`),
    ts,
    amount: 1000 + (i % 9000),
    currency: i % 7 === 0 ? 'EUR' : 'USD',
    refunded: i % 40 === 3 ? 500 : 0,
    status: i % 50 === 7 ? 'failed' : 'paid',
    customer_id: `cus_${i % Math.ceil(n / 2)}`,
    visitor: attributed ? `visitor-${i % Math.ceil(n / 3)}` : null,
    touch: attributed
      ? {
          session_id: `s${i}`,
          ts: ts - 2 * DAY,
          channel,
          referrer_host: null,
          source: null,
          campaign: null,
          landing_page: landing,
          country: null,
          device: 'Desktop',
        }
      : null,
    touch_dims: attributed ? dims : null,
    rev: 1,
  };
}

/** Payments, net cents and distinct payers per value of a dimension, from the contributions. */
function byValue(
  contributions: readonly Contribution[],
  d: PaymentDimension,
): Map<string, { payments: number; cents: number; payers: Set<string> }> {
  const out = new Map<string, { payments: number; cents: number; payers: Set<string> }>();
  for (const c of contributions) {
    if (!counts(c)) continue;
    for (const v of c.dims ? (c.dims[d] ?? []) : [UNATTRIBUTED_KEY]) {
      let row = out.get(v);
      if (!row) out.set(v, (row = { payments: 0, cents: 0, payers: new Set() }));
      row.payments++;
      row.cents += c.cents;
      row.payers.add(c.customer);
    }
  }
  return out;
}

const close = (a: number, b: number, relative: number) => Math.abs(a - b) <= relative * Math.max(1, b);

/**
 * A site with `payments` payments in May 2026 loaded with the payment
 * store's bulk load, plus `webhook` more settled one by one through the
 * webhook path (visits written first, so they are credited), then every
 * report over May compared with a direct computation, each within the
 * budget, and every item within its bound.
 * @returns each report's requests and bytes, and the item sizes per type
 */
export async function paymentsMonth(size: { payments: number; webhook: number; values: number }): Promise<{
  costs: Record<string, { requests: number; bytes: number }>;
  items: Record<string, { items: number; max: number }>;
}> {
  const meter = new CapacityMeter();
  const site = 'pay.test';
  const db = await memoryTable([{ domain: site, timezone: 'UTC' }], { capacityMeter: meter, maxAttempts: 3 });
  const { conn } = db;
  try {
    const payments = Array.from({ length: size.payments }, (_, i) =>
      generatedPayment(site, i, size.payments, size.values),
    );
    const store = dynamoPaymentStores(conn);
    await store.bulk.bulkLoad(site, 'UTC', payments, rate);
    // The webhook path: a visit, then the payment's event, as Stripe would send it.
    const config = (await new DynamoConfigStore(conn).getSite(site))!;
    const deps: PaymentDeps = { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => rate };
    for (let j = 0; j < size.webhook; j++) {
      const ts = MAY + 10 * DAY + j * 3_600_000;
      const visitor = `webhook-visitor-${j}`;
      const events = [
        visitEventOf(
          trackedEvent({
            site,
            event_id: `w${j}`,
            visitor_id: visitor,
            ts: ts - 600_000,
            path: `/w/${j}`,
            channel: 'AI',
            referrer_host: 'chatgpt.com',
          }),
        ),
      ];
      await new DynamoVisitStore(conn).writeVisits(buildVisits(site, visitor, events), []);
      await applyProviderFacts(deps, config, {
        event_id: `evt_${j}`,
        event_type: 'checkout.session.completed',
        payments: [
          {
            provider: 'stripe',
            id: `pi_webhook_${j}`,
            aliases: [],
            visitor_id: visitor,
            customer_id: `cus_webhook_${j}`,
            ts,
            amount: 4900,
            currency: 'USD',
            status: 'paid',
          },
        ],
        subscriptions: [],
        customers: [],
      });
    }
    const webhookPayments = await Promise.all(
      Array.from({ length: size.webhook }, (_, j) => store.payments.getPayment(site, 'stripe', `pi_webhook_${j}`)),
    );
    for (const p of webhookPayments) expect(p?.touch?.channel).toBe('AI');
    const contributions = [...payments, ...webhookPayments.flatMap((p) => (p ? [p] : []))].flatMap(
      (p) => contributionOf(p, 'UTC', rate) ?? [],
    );
    const counted = contributions.filter(counts);
    const cents = counted.reduce((n, c) => n + c.cents, 0);
    const range = { from: '2026-05-01', to: '2026-05-31' };
    const costs: Record<string, { requests: number; bytes: number }> = {};
    const run = <T>(name: string, report: (deps: ReportDeps) => Promise<T>) =>
      measured(meter, name, conn, report, NOW, costs);

    const o = await run('overview', (d) => overview(d, 'acme', site, range));
    expect(o.current.payments).toBe(counted.length);
    expect(Math.round(o.current.revenue_usd * 100)).toBe(cents);
    const payers = new Set(counted.map((c) => c.customer)).size;
    // Exact up to 1,000 payers a period, then HyperLogLog (0.81% standard error): 3 standard errors.
    expect(
      close(o.current.customers, payers, payers > 1000 ? 0.025 : 0),
      `customers ${o.current.customers} vs ${payers}`,
    ).toBe(true);
    // 30 days off the month's bounds: daily items, the payer sets of 60 days (this range and the previous one).
    const days30 = { from: '2026-05-02', to: '2026-05-31' };
    const o30 = await run('overview 30 days', (d) => overview(d, 'acme', site, days30));
    const counted30 = counted.filter((c) => c.day >= days30.from);
    expect(o30.current.payments).toBe(counted30.length);
    const payers30 = new Set(counted30.map((c) => c.customer)).size;
    const perDay = Math.max(
      ...[...new Set(counted30.map((c) => c.day))].map(
        (day) => new Set(counted30.filter((c) => c.day === day).map((c) => c.customer)).size,
      ),
    );
    expect(
      close(o30.current.customers, payers30, perDay > 1000 ? 0.025 : 0),
      `customers 30 days ${o30.current.customers} vs ${payers30}`,
    ).toBe(true);

    for (const dimension of DIMENSIONS) {
      const b = await run(`breakdown ${dimension}`, (d) => breakdown(d, 'acme', site, dimension, range, 1_000_000));
      const expected = byValue(contributions, dimension);
      expect(b.rows.filter((r) => r.payments > 0).length, dimension).toBe(expected.size);
      for (const row of b.rows) {
        const key = row.unattributed ? UNATTRIBUTED_KEY : (row.key ?? NONE);
        const e = expected.get(key);
        if (row.payments === 0) continue;
        expect(e, `${dimension} ${row.label}`).toBeDefined();
        expect([row.payments, Math.round(row.revenue_usd * 100)], `${dimension} ${row.label}`).toEqual([
          e?.payments,
          e?.cents,
        ]);
        // Distinct payers: exact while a period's bucket holds ≤ 1,000 payer ids, else the sum of the days'
        // distinct counts (`docs/data-model.md`, "Distinct payers"): never fewer than the payers, never more than the payments.
        expect(row.customers, `${dimension} ${row.label} customers`).toBeGreaterThanOrEqual(e?.payers.size ?? 0);
        expect(row.customers, `${dimension} ${row.label} customers`).toBeLessThanOrEqual(e?.payments ?? 0);
      }
    }

    const series = await run('timeseries day', (d) => timeseries(d, 'acme', site, range, 'day'));
    for (const point of series.points) {
      const day = counted.filter((c) => c.day === point.start.slice(0, 10));
      expect([point.payments, Math.round(point.revenue_usd * 100)], point.start).toEqual([
        day.length,
        day.reduce((n, c) => n + c.cents, 0),
      ]);
    }
    expect(series.points.reduce((n, p) => n + p.payments, 0)).toBe(counted.length);

    const g = await run('goals', (d) => goals(d, 'acme', site, range, null, 1000));
    const signup = byValue(contributions, 'goal').get('Signup');
    expect(g.rows.find((r) => r.goal === 'Signup')).toMatchObject({ payments: signup?.payments ?? 0 });

    const listed = [...contributions].sort((a, b) => b.ts - a.ts || (a.key < b.key ? 1 : -1));
    for (const [offset, limit] of [
      [0, 100],
      [100, 100],
      [Math.floor(listed.length / 2), 50],
    ] as const) {
      const page = await run(`payments offset ${offset}`, (d) =>
        listPayments(d, 'acme', site, range, 'all', limit, offset),
      );
      expect(page.total).toBe(listed.length);
      expect(page.rows.map((r) => `stripe:${r.provider_payment_id}`)).toEqual(
        listed.slice(offset, offset + limit).map((c) => c.key),
      );
    }
    const refunded = listed.filter((c) => c.refunded);
    const rp = await run('payments refunded', (d) => listPayments(d, 'acme', site, range, 'refunded', 100, 0));
    expect(rp.total).toBe(refunded.length);
    expect(rp.rows.map((r) => `stripe:${r.provider_payment_id}`)).toEqual(refunded.slice(0, 100).map((c) => c.key));

    // Retention from cohort rollups (its answers are checked in the retention tests): the budget.
    const cohorts = await run('retention', (d) => retention(d, 'acme', site, range));
    expect(cohorts.total.customers).toBeGreaterThan(0);
    return { costs, items: await assertItemBounds(conn) };
  } finally {
    await db.close();
  }
}

/**
 * A day of `distinct` visits, each from its own page path and referrer (as
 * a crawler or an attacker sending made-up paths would), fed through the
 * sessionizer in batches of `batch` events and compacted every
 * `compactEvery` batches; then the page, landing page and referrer
 * breakdowns of the day and of its month compared with a direct computation,
 * each within the budget, and every item within its bound.
 */
export async function distinctPagesDay(size: {
  distinct: number;
  pathChars: number;
  batch: number;
  compactEvery: number;
}): Promise<{
  costs: Record<string, { requests: number; bytes: number }>;
  items: Record<string, { items: number; max: number }>;
}> {
  const meter = new CapacityMeter();
  const site = 'pages.test';
  const db = await memoryTable([{ domain: site, timezone: 'UTC' }], { capacityMeter: meter, maxAttempts: 3 });
  const { conn } = db;
  try {
    const day = Date.UTC(2026, 4, 20);
    const perVisitor = 40; // visits 35 minutes apart: 40 fit in a day
    const path = (k: number) =>
      `/a/${String(k).padStart(7, '0')}${size.pathChars > 10 ? `/${'s'.repeat(size.pathChars - 11)}` : ''}`;
    const events: TrackedEvent[] = Array.from({ length: size.distinct }, (_, k) =>
      trackedEvent({
        site,
        event_id: `d${String(k).padStart(7, '0')}`,
        visitor_id: `visitor-${String(Math.floor(k / perVisitor)).padStart(6, '0')}`,
        ts: day + 600_000 + (k % perVisitor) * 35 * 60_000,
        path: path(k),
        referrer_host: `r${String(k).padStart(7, '0')}.example.org`,
        channel: 'Referral',
      }),
    );
    const rollups = new DynamoRollupStore(conn);
    const deps = { sites: new DynamoConfigStore(conn), visits: new DynamoVisitStore(conn), rollups };
    for (let i = 0, n = 0; i < events.length; i += size.batch, n++) {
      const sequence = String((n + 1) * 1000);
      await sessionizeBatch(
        deps,
        { shard: 'shard-1', sequence },
        events
          .slice(i, i + size.batch)
          .map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) })),
      );
      if ((n + 1) % size.compactEvery === 0) await rollups.compact(site);
    }
    const costs: Record<string, { requests: number; bytes: number }> = {};
    const check = async (
      name: string,
      dimension: Dimension,
      range: { from: string; to: string },
      value: (k: number) => string,
    ) => {
      const b = await measured(
        meter,
        name,
        conn,
        (d) => breakdown(d, 'acme', site, dimension, range, 1_000_000),
        NOW,
        costs,
      );
      expect(b.total, name).toBe(size.distinct);
      const rows = new Map(b.rows.map((r) => [r.key, r.visitors]));
      for (let k = 0; k < size.distinct; k++) expect(rows.get(value(k)), `${name} ${value(k).slice(0, 12)}`).toBe(1);
    };
    const dayRange = { from: '2026-05-20', to: '2026-05-20' };
    const monthRange = { from: '2026-05-01', to: '2026-05-31' };
    // Before the last compaction (some deltas still pending: readers fold them in), then after.
    await check('page, day, deltas pending', 'page', dayRange, path);
    await rollups.compact(site);
    await check('page, day', 'page', dayRange, path);
    await check('page, month', 'page', monthRange, path);
    await check('landing_page, day', 'landing_page', dayRange, path);
    await check('referrer, day', 'referrer', dayRange, (k) => `r${String(k).padStart(7, '0')}.example.org`);
    const o = await measured(meter, 'overview', conn, (d) => overview(d, 'acme', site, dayRange), NOW, costs);
    expect(o.current.sessions).toBe(size.distinct);
    expect(o.current.pageviews).toBe(size.distinct);
    return { costs, items: await assertItemBounds(conn) };
  } finally {
    await db.close();
  }
}

/**
 * A year of `visits` rollups with `perDay` distinct visitors a day (issue
 * 15: 1M visits a month is ~33,000 a day), one logged batch a day through
 * the rollup store, compacted every 30 days and the last day left pending
 * (readers fold it in); then the time series of the 365 days by day and by
 * month, and the overview of 30 days and of the year, compared with a
 * direct computation (the same sketches built from the ids: exact equality,
 * HyperLogLog estimates included), each within the budget, and every item
 * within its bound.
 */
export async function visitorsYear(size: { perDay: number }): Promise<{
  costs: Record<string, { requests: number; bytes: number }>;
  items: Record<string, { items: number; max: number }>;
}> {
  const meter = new CapacityMeter();
  const site = 'year.test';
  const db = await memoryTable([{ domain: site, timezone: 'UTC' }], { capacityMeter: meter, maxAttempts: 3 });
  const { conn } = db;
  try {
    const last = Date.UTC(2026, 5, 9);
    const days = Array.from({ length: 365 }, (_, k) => new Date(last - (364 - k) * DAY).toISOString().slice(0, 10));
    // A tenth of a day's visitors came the day before too (the union over days is less than the sum).
    const idsOf = (k: number) =>
      Array.from({ length: size.perDay }, (_, i) => (i < size.perDay / 10 && k > 0 ? `v${k - 1}-${i}` : `v${k}-${i}`));
    const rollups = new DynamoRollupStore(conn);
    const delta = (granularity: 'D' | 'M', period: string, ids: string[]): RollupDelta => ({
      key: { site, metric: 'visits', granularity, period, bucket: 0 },
      visits: ids.length,
      pageviews: 2 * ids.length,
      counters: new Map(),
      values: new Map(),
      visitors: new Set(ids),
      valueVisitors: new Map(),
    });
    for (const [k, day] of days.entries()) {
      const ids = idsOf(k);
      await rollups.apply([delta('D', day, ids), delta('M', day.slice(0, 7), ids)], {
        shard: 'shard-1',
        sequence: String(k + 1),
      });
      if (k % 30 === 29 && k < days.length - 1) await rollups.compact(site);
    }
    await rollups.compact(site);
    await rollups.apply(
      [
        delta('D', days.at(-1) ?? '', ['late-1', 'late-2']),
        delta('M', (days.at(-1) ?? '').slice(0, 7), ['late-1', 'late-2']),
      ],
      { shard: 'shard-1', sequence: String(days.length + 1) },
    );
    const sketches = days.map((_, k) =>
      addVisitors(emptySketch(), [...idsOf(k), ...(k === days.length - 1 ? ['late-1', 'late-2'] : [])]),
    );
    const visitorsOf = (from: string, to: string) =>
      countVisitors(unionSketches(sketches.filter((_, k) => (days[k] ?? '') >= from && (days[k] ?? '') <= to)));
    const costs: Record<string, { requests: number; bytes: number }> = {};
    const run = <T>(name: string, report: (deps: ReportDeps) => Promise<T>) =>
      measured(meter, name, conn, report, last + DAY / 2, costs);
    const range = { from: days[0] ?? '', to: days.at(-1) ?? '' };

    const byDay = await run('timeseries 12m by day', (d) => timeseries(d, 'acme', site, range, 'day'));
    expect(byDay.points.map((p) => p.visitors)).toEqual(sketches.map((s) => countVisitors(s)));
    expect(byDay.points.reduce((n, p) => n + p.sessions, 0)).toBe(365 * size.perDay + 2);
    const byMonth = await run('timeseries 12m by month', (d) => timeseries(d, 'acme', site, range, 'month'));
    for (const point of byMonth.points) {
      const inMonth = days.filter((day) => day.startsWith(point.start));
      expect(point.visitors, point.start).toBe(visitorsOf(inMonth[0] ?? '', inMonth.at(-1) ?? ''));
    }
    const days30 = { from: days[days.length - 30] ?? '', to: range.to };
    const o30 = await run('overview 30d (visitors)', (d) => overview(d, 'acme', site, days30));
    expect(o30.current.visitors).toBe(visitorsOf(days30.from, days30.to));
    const oYear = await run('overview 12m (visitors)', (d) => overview(d, 'acme', site, range));
    expect(oYear.current.visitors).toBe(visitorsOf(range.from, range.to));
    return { costs, items: await assertItemBounds(conn) };
  } finally {
    await db.close();
  }
}
