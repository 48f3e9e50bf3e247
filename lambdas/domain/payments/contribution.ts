import { createHash } from 'node:crypto';
import { localDay, localHour, addDays } from '../range.js';
import {
  DIMENSION_BUCKETS,
  GOAL_BUCKETS,
  NONE,
  PAYMENT_DIMENSIONS,
  bucketOf,
  creditedValuesOf,
  type PaymentDimension,
} from '../rollup.js';
import {
  EXACT_LIMIT,
  addVisitors,
  countVisitors,
  emptySketch,
  unionSketches,
  type VisitorSketch,
} from '../visitor-sketch.js';
import type { Payment } from './payment.js';
import { netUsd, type UsdRate } from './money.js';
import { dict, own } from '../dict.js';

/**
 * What one payment puts into the payment rollups (`docs/data-model.md`,
 * "Payments"). A payment is stored once more as a PAYMENT_LIST item in its
 * site-local month, holding this contribution; the day's PAYMENT_TOTALS and
 * PAYMENT_CUSTOMERS items are recomputed from the list items of that day, and
 * the month's from its days. A rollup is therefore a function of the list
 * items, whatever order payments, refunds and re-credits arrive in, and a
 * replay recomputes the same numbers (exactly once without transactions).
 */
export interface Contribution {
  /** `provider:id` (`paymentKey`). */
  key: string;
  rev: number;
  /** Time of the payment, ms since epoch (UTC). */
  ts: number;
  /** Site-local day and hour of `ts` (`YYYY-MM-DD`, `YYYY-MM-DDTHH`). */
  day: string;
  hour: string;
  /** Net of refunds, USD cents, at the rate in force when the payment was last settled. */
  cents: number;
  /** The distinct-payer key, hashed (`customerHash`). */
  customer: string;
  /** Site-local day the credited visit started, null when Unattributed. */
  touch_day: string | null;
  /**
   * The credited visit's id (`Touch.session_id`), null when Unattributed: what the payments table joins
   * the visit by. Absent from list items written before it was stored (`docs/data-model.md`, "Old forms still read").
   */
  visit?: string | null;
  failed: boolean;
  refunded: boolean;
  /** Every dimension's values of the credited visit (`page`: its pages, cut to `CREDITED_VALUES`); null when Unattributed. */
  dims: Record<PaymentDimension, string[]> | null;
}

/** Payment list filters (`docs/api.md` "Payments" `filter`) and the list class that serves each. */
export const LIST_CLASSES = ['all', 'attributed', 'unattributed', 'refunded'] as const;
export type ListClass = (typeof LIST_CLASSES)[number];

export const paymentKey = (p: Pick<Payment, 'provider' | 'provider_payment_id'>) =>
  `${p.provider}:${p.provider_payment_id}`;

/** Distinct payers: the provider's customer, or the payment itself when it has no customer. */
export const customerKey = (p: Payment) =>
  p.customer_id ? `${p.provider}:${p.customer_id}` : `payment:${paymentKey(p)}`;

/**
 * A payer key as the rollups store it: 66 bits of SHA-256 in 11 base64url
 * characters. Only distinct counting uses it; a collision among a site's
 * payers has a probability under 10^-8 below 10^6 payers (birthday bound
 * n²/2^67), far inside the sketch's error once it takes over.
 */
export const customerHash = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 11);

/**
 * The contribution of a payment, or null while it has no place in the list
 * (no time, amount or currency yet, or no USD rate for its currency).
 * Failed payments are listed (their status says so) but not counted.
 */
export function contributionOf(p: Payment, timezone: string, rate: UsdRate): Contribution | null {
  const net = netUsd(p, rate);
  if (p.ts === null || p.amount === null || p.currency === null || net === null) return null;
  return {
    key: paymentKey(p),
    rev: p.rev,
    ts: p.ts,
    day: localDay(p.ts, timezone),
    hour: localHour(p.ts, timezone),
    cents: Math.round(net * 100),
    customer: customerHash(customerKey(p)),
    touch_day: p.touch ? localDay(p.touch.ts, timezone) : null,
    visit: p.touch?.session_id ?? null,
    failed: p.status === 'failed',
    refunded: p.refunded > 0,
    // Cut again: a payment settled before `CREDITED_VALUES` existed may hold more.
    dims:
      p.touch && p.touch_dims
        ? (Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, creditedValuesOf(p.touch_dims?.[d] ?? [])])) as Record<
            PaymentDimension,
            string[]
          >)
        : null,
  };
}

/** Whether a payment counts in the totals (`docs/payments.md` "Statuses": not failed). */
export const counts = (c: Contribution) => !c.failed;

/** The list classes a contribution is listed under. */
export function classesOf(c: Contribution): ListClass[] {
  return ['all', c.touch_day !== null ? 'attributed' : 'unattributed', ...(c.refunded ? (['refunded'] as const) : [])];
}

/** `[payments, cents]`: a counter pair. */
export type Pair = [number, number];

/**
 * Counters of one period (day or month), PAYMENT_TOTALS: small and bounded
 * (`docs/data-model.md`). `touch` is the histogram of counted, attributed
 * payments by the day their credited visit started, which the overview needs
 * for "matched" over any range; touch days more than `TOUCH_DAYS_KEPT` days
 * before the period are merged by month (bounds the item whatever the site's
 * age; `matchedIn` says what that costs in exactness).
 */
export interface PeriodTotals {
  /** Listed payments per class (failed included). */
  listed: Record<ListClass, number>;
  /** Counted payments and their net cents. */
  payments: number;
  cents: number;
  /** By local hour (`YYYY-MM-DDTHH`), day items only. */
  hours: Record<string, Pair>;
  /** By touch day (`YYYY-MM-DD`) or, older than `TOUCH_DAYS_KEPT`, touch month (`YYYY-MM`). */
  touch: Record<string, Pair>;
}

/** How far back before a period its touch histogram keeps days (beyond: months). 400 covers any range of the `12m` preset and the `day` time series. */
export const TOUCH_DAYS_KEPT = 400;

export const emptyTotals = (): PeriodTotals => ({
  listed: { all: 0, attributed: 0, unattributed: 0, refunded: 0 },
  payments: 0,
  cents: 0,
  hours: {},
  touch: {},
});

const addPair = (into: Record<string, Pair>, key: string, n: number, cents: number) => {
  const p = (into[key] ??= [0, 0]);
  p[0] += n;
  p[1] += cents;
};

/** The touch histogram key of a touch day for a period starting on `periodStart`. */
export const touchKey = (touchDay: string, periodStart: string) =>
  touchDay < addDays(periodStart, -TOUCH_DAYS_KEPT) ? touchDay.slice(0, 7) : touchDay;

/** The totals of one day from its list items' contributions. */
export function dayTotals(day: string, contributions: readonly Contribution[]): PeriodTotals {
  const t = emptyTotals();
  for (const c of contributions) {
    for (const cls of classesOf(c)) t.listed[cls]++;
    if (!counts(c)) continue;
    t.payments++;
    t.cents += c.cents;
    addPair(t.hours, c.hour, 1, c.cents);
    if (c.touch_day !== null) addPair(t.touch, touchKey(c.touch_day, day), 1, c.cents);
  }
  return t;
}

/** The totals of a month from its days' totals (hours are left to the days). */
export function monthTotals(month: string, days: readonly PeriodTotals[]): PeriodTotals {
  const t = emptyTotals();
  const start = `${month}-01`;
  for (const d of days) {
    for (const cls of LIST_CLASSES) t.listed[cls] += d.listed[cls];
    t.payments += d.payments;
    t.cents += d.cents;
    for (const [k, [n, cents]] of Object.entries(d.touch))
      addPair(t.touch, k.length === 10 ? touchKey(k, start) : k, n, cents);
  }
  return t;
}

/**
 * Counted payments of a period whose credited visit started in `from`..`to`
 * ("matched", `docs/api.md` "Overview"). Exact when the touch day is kept by day; a touch
 * older than `TOUCH_DAYS_KEPT` days before the period is known by month only,
 * and counts when its month lies in the range (only a range longer than 400
 * days whose first month is partial can tell the difference).
 */
export function matchedIn(t: PeriodTotals, from: string, to: string): Pair {
  const out: Pair = [0, 0];
  for (const [k, [n, cents]] of Object.entries(t.touch)) {
    const inside = k.length === 10 ? k >= from && k <= to : k >= from.slice(0, 7) && k <= to.slice(0, 7);
    if (!inside) continue;
    out[0] += n;
    out[1] += cents;
  }
  return out;
}

/**
 * Distinct payers of one period, PAYMENT_CUSTOMERS: `customers` of counted
 * payments (exact set while at most `EXACT_LIMIT`, then HyperLogLog,
 * `visitor-sketch.ts`), and `touched`, for "converted" (payers of matched
 * payments): each payer's touch days while the period has at most
 * `EXACT_LIMIT` of them (exact over any range), else a sketch of the payers
 * with any touch (`convertedIn` then estimates; `docs/data-model.md`).
 */
export interface PeriodCustomers {
  customers: VisitorSketch;
  touched: { kind: 'exact'; days: Record<string, string[]> } | { kind: 'sketch'; sketch: VisitorSketch };
}

export const emptyCustomers = (): PeriodCustomers => ({
  customers: emptySketch(),
  touched: { kind: 'exact', days: dict() },
});

/**
 * Adds one payer's touch days to a period's `touched`, switching to a sketch past the limit. `held`
 * counts the touch days `into` holds (kept by the caller, which builds `into` alone, so that a
 * period of `EXACT_LIMIT` payers is not summed again for each).
 */
function addTouched(into: PeriodCustomers, customer: string, days: readonly string[], held: { days: number }): void {
  if (into.touched.kind === 'sketch') {
    into.touched.sketch = addVisitors(into.touched.sketch, [customer]);
    return;
  }
  const had = own(into.touched.days, customer) ?? [];
  const next = new Set(had);
  for (const d of days) next.add(d);
  into.touched.days[customer] = [...next].sort();
  held.days += next.size - had.length;
  if (held.days > EXACT_LIMIT)
    into.touched = { kind: 'sketch', sketch: addVisitors(emptySketch(), Object.keys(into.touched.days)) };
}

/** The distinct payers of one day from its list items' contributions. */
export function dayCustomers(contributions: readonly Contribution[]): PeriodCustomers {
  const out = emptyCustomers();
  const counted = contributions.filter(counts);
  out.customers = addVisitors(
    out.customers,
    counted.map((c) => c.customer),
  );
  const held = { days: 0 };
  for (const c of counted) if (c.touch_day !== null) addTouched(out, c.customer, [c.touch_day], held);
  return out;
}

/** The distinct payers of a month from its days'. */
export function mergeCustomers(periods: readonly PeriodCustomers[]): PeriodCustomers {
  const out = emptyCustomers();
  out.customers = reduceSketch(periods.map((p) => p.customers));
  const held = { days: 0 };
  for (const p of periods) {
    if (p.touched.kind === 'sketch') {
      const known = out.touched.kind === 'exact' ? Object.keys(out.touched.days) : [];
      const base = out.touched.kind === 'sketch' ? out.touched.sketch : addVisitors(emptySketch(), known);
      out.touched = { kind: 'sketch', sketch: unionSketches([base, p.touched.sketch]) };
    } else {
      for (const [customer, days] of Object.entries(p.touched.days)) addTouched(out, customer, days, held);
    }
  }
  return out;
}

/** A union that stays a sketch a period can store (exact sets past the limit become registers). */
function reduceSketch(sketches: readonly VisitorSketch[]): VisitorSketch {
  const union = unionSketches(sketches);
  return union.kind === 'exact' ? addVisitors(emptySketch(), union.ids) : union;
}

/** Distinct payers of counted payments over the periods of a range. */
export function customersIn(periods: readonly PeriodCustomers[]): number {
  return countVisitors(unionSketches(periods.map((p) => p.customers)));
}

/**
 * Distinct payers of matched payments ("converted", `docs/api.md` "Overview") over the
 * periods of range `from`..`to`: exact while every period holds its payers'
 * touch days. Otherwise an estimate: the distinct payers with any touch in
 * those periods (HyperLogLog), times the share of attributed payments that
 * are matched (`matched / attributed`), documented in `docs/data-model.md`.
 */
export function convertedIn(
  periods: readonly PeriodCustomers[],
  from: string,
  to: string,
  matched: number,
  attributed: number,
): number {
  if (periods.every((p) => p.touched.kind === 'exact')) {
    const ids = new Set<string>();
    for (const p of periods) {
      if (p.touched.kind !== 'exact') continue;
      for (const [customer, days] of Object.entries(p.touched.days))
        if (days.some((d) => (d.length === 10 ? d >= from && d <= to : d >= from.slice(0, 7) && d <= to.slice(0, 7))))
          ids.add(customer);
    }
    return ids.size;
  }
  const sketches = periods.map((p) =>
    p.touched.kind === 'sketch' ? p.touched.sketch : addVisitors(emptySketch(), Object.keys(p.touched.days)),
  );
  const touched = countVisitors(unionSketches(sketches));
  return attributed === 0 ? 0 : Math.round((touched * matched) / attributed);
}

/** Attributed, counted payments of a period (the histogram's total), for `convertedIn`'s estimate. */
export const attributedOf = (t: PeriodTotals): number => Object.values(t.touch).reduce((n, [k]) => n + k, 0);

/** Row key of Unattributed payments in the rollups and breakdowns (no dimension value is a NUL). */
export const UNATTRIBUTED_KEY = '\u0000';

/** `[payments, net cents, payers]`: payers are hashed ids while the item holds at most `EXACT_LIMIT` of them in all, else the period's distinct count. */
export type ValueCounters = [number, number, string[] | number];

/** How many rollup buckets a payment dimension's values are hashed into (`DIMENSION_BUCKETS`, `GOAL_BUCKETS`). */
export const bucketCount = (d: PaymentDimension) => (d === 'goal' ? GOAL_BUCKETS : DIMENSION_BUCKETS[d]);

/**
 * The payment dimensions of one bucket (channel, country, device, browser,
 * os, language). Their rows share one PAYMENT_DIMENSION item per period, the
 * period's group, with the Unattributed row and every bucketed dimension's
 * `(none)` row (`docs/data-model.md`, "The group"): a payment's credit
 * changing rewrites one item for all of them instead of one per dimension,
 * and a visit without a campaign, keyword or referrer costs no bucket.
 */
export const GROUPED_DIMENSIONS = PAYMENT_DIMENSIONS.filter((d) => bucketCount(d) === 1);
/** The dimensions whose values keep their own items, hashed into buckets. */
export const BUCKETED_DIMENSIONS = PAYMENT_DIMENSIONS.filter((d) => bucketCount(d) > 1);
export const isGrouped = (d: PaymentDimension) => bucketCount(d) === 1;

/**
 * A period's group (the grouped dimensions' rows, the bucketed dimensions'
 * `(none)` rows and the Unattributed row), as recomputed and merged; stored
 * flattened (`flattenGroup`).
 */
export interface GroupRows {
  dims: Partial<Record<PaymentDimension, Record<string, ValueCounters>>>;
  /** `{ [UNATTRIBUTED_KEY]: counters }`, or empty when the period has no counted Unattributed payment. */
  unattributed: Record<string, ValueCounters>;
}

/** Whether a dimension's value is counted in its period's group rather than in a bucket of its own (while the period's buckets are in use). */
export const inGroup = (d: PaymentDimension, value: string) => isGrouped(d) || value === NONE;

/**
 * A day's payment counters of one bucket of a dimension, from the day's
 * contributions: counted payments, net cents and payers per value of the
 * credited visit (`docs/api.md` "Breakdowns": `page` counts every page of the
 * visit). Unattributed payments, and a bucketed dimension's `(none)`, are
 * the group's (`groupOf`).
 */
export function dimensionCounters(
  contributions: readonly Contribution[],
  d: PaymentDimension,
  bucket: number,
): Record<string, ValueCounters> {
  return dimensionRows(contributions, d, (value) => !inGroup(d, value) && bucketOf(d, value) === bucket);
}

/** A day's counters of the values of `d` that `keep` takes. */
function dimensionRows(
  contributions: readonly Contribution[],
  d: PaymentDimension,
  keep: (value: string) => boolean,
): Record<string, ValueCounters> {
  const sets = new Map<string, { n: number; cents: number; payers: Set<string> }>();
  for (const c of contributions) {
    if (!counts(c) || !c.dims) continue;
    for (const value of c.dims[d] ?? []) {
      if (!keep(value)) continue;
      let row = sets.get(value);
      if (!row) sets.set(value, (row = { n: 0, cents: 0, payers: new Set() }));
      row.n++;
      row.cents += c.cents;
      row.payers.add(c.customer);
    }
  }
  return packCounters(sets);
}

/**
 * A day's rows of every dimension, each packed as one (payers exact while
 * the dimension's rows hold ≤ `EXACT_LIMIT` of them), and the Unattributed
 * row: what a small period's group holds inline (`docs/data-model.md`,
 * "The group").
 */
export function dayRows(contributions: readonly Contribution[]): GroupRows {
  const unattributed = { n: 0, cents: 0, payers: new Set<string>() };
  for (const c of contributions) {
    if (!counts(c) || c.dims) continue;
    unattributed.n++;
    unattributed.cents += c.cents;
    unattributed.payers.add(c.customer);
  }
  return {
    dims: Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, dimensionRows(contributions, d, () => true)])),
    unattributed: unattributed.n > 0 ? packCounters(new Map([[UNATTRIBUTED_KEY, unattributed]])) : dict(),
  };
}

/** The group part of rows that hold every dimension (`dayRows`): what a period's group holds once its buckets take the rest. */
export function groupOf(rows: GroupRows): GroupRows {
  return {
    dims: Object.fromEntries(
      Object.entries(rows.dims).map(([d, values]) => [d, pick(values ?? {}, (v) => inGroup(d as PaymentDimension, v))]),
    ),
    unattributed: rows.unattributed,
  };
}

/** One bucket's rows of a bucketed dimension, from rows that hold the whole dimension (its `(none)` is the group's). */
export function bucketRows(
  values: Readonly<Record<string, ValueCounters>>,
  d: PaymentDimension,
  bucket: number,
): Record<string, ValueCounters> {
  return pick(values, (v) => !inGroup(d, v) && bucketOf(d, v) === bucket);
}

const pick = (
  values: Readonly<Record<string, ValueCounters>>,
  keep: (value: string) => boolean,
): Record<string, ValueCounters> => dict(Object.entries(values).filter(([v]) => keep(v)));

/** A month's group from its days' groups (each dimension and the Unattributed row merged as `mergeDimensionCounters`). */
export function mergeGroups(days: readonly GroupRows[]): GroupRows {
  return {
    dims: Object.fromEntries(
      PAYMENT_DIMENSIONS.map((d) => [d, mergeDimensionCounters(days.map((g) => g.dims[d] ?? {}))]),
    ),
    unattributed: mergeDimensionCounters(days.map((g) => g.unattributed)),
  };
}

/** Sums a month's days of one dimension bucket. Payers stay exact sets while every day's are and the month's stay under the limit. */
export function mergeDimensionCounters(
  days: ReadonlyArray<Record<string, ValueCounters>>,
): Record<string, ValueCounters> {
  return packCounters(sumCounters(days));
}

/** Per value: payments and cents added, payers unioned while every input holds a set, else their counts added. */
function sumCounters(
  periods: ReadonlyArray<Record<string, ValueCounters>>,
): Map<string, { n: number; cents: number; payers: Set<string> | number }> {
  const sums = new Map<string, { n: number; cents: number; payers: Set<string> | number }>();
  for (const period of periods) {
    for (const [value, [n, cents, payers]] of Object.entries(period)) {
      let row = sums.get(value);
      if (!row) sums.set(value, (row = { n: 0, cents: 0, payers: new Set() }));
      row.n += n;
      row.cents += cents;
      row.payers = addPayers(row.payers, payers);
    }
  }
  return sums;
}

function addPayers(into: Set<string> | number, payers: string[] | number): Set<string> | number {
  if (typeof into === 'number' || typeof payers === 'number')
    return (typeof into === 'number' ? into : into.size) + (typeof payers === 'number' ? payers : payers.length);
  for (const p of payers) into.add(p);
  return into;
}

/** Stored form: payer sets while the item holds at most `EXACT_LIMIT` payer entries in all, else each value's count. */
function packCounters(
  rows: ReadonlyMap<string, { n: number; cents: number; payers: Set<string> | number }>,
): Record<string, ValueCounters> {
  const entries = [...rows].reduce(
    (n, [, r]) => n + (typeof r.payers === 'number' ? EXACT_LIMIT + 1 : r.payers.size),
    0,
  );
  const exact = entries <= EXACT_LIMIT;
  const out = dict<ValueCounters>();
  for (const [value, r] of [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const payers = typeof r.payers === 'number' ? r.payers : exact ? [...r.payers].sort() : r.payers.size;
    out[value] = [r.n, r.cents, payers];
  }
  return out;
}

/** Payment counters of one breakdown row over a range (`breakdown.ts`). */
export interface ValueTotals {
  payments: number;
  cents: number;
  payers: number;
}

/**
 * Adds up the periods' counters of one dimension per value. Payers are the
 * union of the periods' sets while every period holds sets for the value
 * (exact); otherwise the sum of the periods' distinct counts, which counts a
 * payer paying in two periods twice (`docs/data-model.md`).
 */
export function valueTotals(periods: ReadonlyArray<Record<string, ValueCounters>>): Map<string, ValueTotals> {
  return new Map(
    [...sumCounters(periods)].map(([value, r]) => [
      value,
      { payments: r.n, cents: r.cents, payers: typeof r.payers === 'number' ? r.payers : r.payers.size },
    ]),
  );
}
