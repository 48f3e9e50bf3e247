import { NONE, goalLinkKey, type Dimension } from '../rollup.js';
import { OUTBOUND_GOAL } from '../visit.js';
import { localHour, type DateRange } from '../range.js';
import { emptyTotals, type ValueCounters } from '../payments/contribution.js';
import type { VisitRow } from '../visit-table.js';
import type { VisitorSketch } from '../visitor-sketch.js';
import { dict, type Dict } from '../dict.js';
import { matches, type Filter } from './filters.js';
import { topStats, type OverviewTotals } from './overview.js';
import { breakdownRows, type BreakdownRow } from './breakdown.js';
import { goalRows, type GoalRow } from './goals.js';
import { timeseriesPoints, type Interval, type TimeseriesPoint } from './timeseries.js';
import { ratio, usd } from './periods.js';

/**
 * Filtered reports computed directly from visit rows and credited payments
 * (`docs/api.md`, "Filters"; `docs/data-model.md`, "Filtered reports"): the
 * reference the SQL engine is tested against, by the unfiltered reports' own
 * definitions (their row and total builders are reused where their input
 * can be made from rows). Visitors are exact here: distinct visitor ids.
 *
 * A payment belongs to a filtered report when it falls in the range (its
 * site-local day), did not fail, and its credited visit matches the filter; a
 * payment credited to no visit matches no filter (there is no visit to
 * test), so a filter that matches every visit gives the unfiltered numbers
 * less the Unattributed payments.
 */

/** A payment as the filtered reports read it: its contribution's figures and its credited visit's row. */
export interface CreditedPayment {
  /** Payment time, ms since epoch (UTC). */
  ts: number;
  /** Site-local day of `ts`, `YYYY-MM-DD`. */
  day: string;
  /** Net of refunds, USD cents. */
  cents: number;
  /** Distinct-payer key (`customerHash`). */
  customer: string;
  failed: boolean;
  /** The credited visit's row, null when Unattributed. */
  visit: VisitRow | null;
}

/** What a filtered report reads: the site's visit rows (those of the range; for revenue, the credited visits ride on the payments) and payments. */
export interface FilteredInput {
  rows: readonly VisitRow[];
  payments: readonly CreditedPayment[];
}

const inRange = (day: string, range: Pick<DateRange, 'from' | 'to'>) => day >= range.from && day <= range.to;

/** The range's visits that match, and the range's counted payments whose credited visit matches. */
export function selected(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
): { rows: VisitRow[]; payments: Array<CreditedPayment & { visit: VisitRow }> } {
  return {
    rows: input.rows.filter((r) => inRange(r.day, range) && matches(filter, r)),
    payments: input.payments.filter(
      (p): p is CreditedPayment & { visit: VisitRow } =>
        !p.failed && p.visit !== null && inRange(p.day, range) && matches(filter, p.visit),
    ),
  };
}

/** The sums a filtered overview is made of: the matching visits' (visitors exact) and their credited payments' (USD cents). */
export interface FilteredCounts {
  visitors: number;
  sessions: number;
  pageviews: number;
  bounces: number;
  timed_visits: number;
  /** Summed over timed visits, ms. */
  duration_ms: number;
  payments: number;
  cents: number;
  customers: number;
  /** Payments whose credited visit started in the range, their cents and their distinct payers. */
  matched_payments: number;
  matched_cents: number;
  converted: number;
}

/** The range's matching visits and credited payments, summed (`FilteredCounts`). */
export function filteredCounts(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
): FilteredCounts {
  const { rows, payments } = selected(input, filter, range);
  const matched = payments.filter((p) => inRange(p.visit.day, range));
  return {
    visitors: new Set(rows.map((r) => r.visitor_id)).size,
    sessions: rows.length,
    pageviews: rows.reduce((n, r) => n + r.pageviews, 0),
    bounces: rows.filter((r) => r.bounce).length,
    timed_visits: rows.filter((r) => r.timed).length,
    duration_ms: rows.reduce((n, r) => n + r.duration_ms, 0),
    payments: payments.length,
    cents: payments.reduce((n, p) => n + p.cents, 0),
    customers: new Set(payments.map((p) => p.customer)).size,
    matched_payments: matched.length,
    matched_cents: matched.reduce((n, p) => n + p.cents, 0),
    converted: new Set(matched.map((p) => p.customer)).size,
  };
}

/**
 * Overview totals from a filtered range's sums (`OverviewTotals`, `docs/api.md`
 * "Overview"): a payment is matched when its credited visit started in the
 * range; `converted` counts the distinct payers of matched payments.
 */
export function overviewOfCounts(c: FilteredCounts): OverviewTotals {
  const { visitors, matched_payments: matched, matched_cents: matchedCents } = c;
  return {
    visitors,
    sessions: c.sessions,
    ...topStats([
      {
        visits: c.sessions,
        pageviews: c.pageviews,
        counters: { bounces: c.bounces, timed_visits: c.timed_visits, duration_ms: c.duration_ms },
      },
    ]),
    payments: c.payments,
    customers: c.customers,
    revenue_usd: usd(c.cents),
    converted: c.converted,
    matched_payments: matched,
    matched_revenue_usd: usd(matchedCents),
    conversion: matched > 0 && visitors > 0 ? ratio(c.converted / visitors) : null,
    revenue_per_visitor: matched > 0 && visitors > 0 ? ratio(matchedCents / 100 / visitors) : null,
  };
}

/** Overview totals of a range under a filter (`overviewOfCounts` of `filteredCounts`). */
export function filteredOverview(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
): OverviewTotals {
  return overviewOfCounts(filteredCounts(input, filter, range));
}

/** The values a visit row has for a breakdown dimension (`DIMENSION_VALUES` over rows; `NONE` for none; `page` once per distinct page). */
export const ROW_DIMENSION_VALUES: Readonly<Record<Dimension, (r: VisitRow) => readonly string[]>> = {
  channel: (r) => [r.dimensions.channel ?? NONE],
  referrer: (r) => [r.dimensions.referrer_host ?? NONE],
  campaign: (r) => [r.dimensions.utm_campaign ?? NONE],
  keyword: (r) => [r.dimensions.utm_term ?? NONE],
  landing_page: (r) => [r.landing_page],
  page: (r) => [...new Set(r.pages)],
  country: (r) => [r.dimensions.country ?? NONE],
  device: (r) => [r.dimensions.device ?? NONE],
  browser: (r) => [r.dimensions.browser ?? NONE],
  os: (r) => [r.dimensions.os ?? NONE],
  language: (r) => [r.dimensions.language ?? NONE],
  utm_source: (r) => [r.dimensions.utm_source ?? NONE],
  utm_medium: (r) => [r.dimensions.utm_medium ?? NONE],
  utm_content: (r) => [r.dimensions.utm_content ?? NONE],
  exit_page: (r) => [r.exit_page ?? NONE],
};

/**
 * The values a visit row has for a custom property (`breakdown/prop:<key>`): each distinct value any of
 * its events had, or `NONE` when none had the key.
 */
export function rowPropValues(key: string): (r: VisitRow) => readonly string[] {
  return (r) => {
    const values = [...new Set((r.props ?? []).filter(([k]) => k === key).map(([, v]) => v))];
    return values.length > 0 ? values : [NONE];
  };
}

/** Payment counters per value (`ValueCounters`: payments, net cents, payer keys) of payments keyed by their visit's values. */
function paymentCounters(
  payments: ReadonlyArray<CreditedPayment & { visit: VisitRow }>,
  valuesOf: (r: VisitRow) => Iterable<string>,
): Dict<ValueCounters> {
  const out = dict<ValueCounters>();
  for (const p of payments) {
    for (const value of valuesOf(p.visit)) {
      const c = out[value] ?? [0, 0, []];
      c[0] += 1;
      c[1] += p.cents;
      const payers = c[2] as string[];
      if (!payers.includes(p.customer)) payers.push(p.customer);
      out[value] = c;
    }
  }
  return out;
}

/**
 * A breakdown under a filter (`docs/api.md` "Breakdowns", rules 1, 2, 4, 5; no Unattributed row: see the
 * module's note), by a dimension or by a custom property (`{prop: key}`: a visit under each value it had).
 */
export function filteredBreakdown(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
  dimension: Dimension | { prop: string },
  limit: number,
): { total: number; rows: BreakdownRow[] } {
  const { rows, payments } = selected(input, filter, range);
  const valuesOf = typeof dimension === 'string' ? ROW_DIMENSION_VALUES[dimension] : rowPropValues(dimension.prop);
  const visits = dict<number>();
  for (const r of rows) for (const v of valuesOf(r)) visits[v] = (visits[v] ?? 0) + 1;
  return breakdownRows([visits], [paymentCounters(payments, valuesOf)], limit);
}

/**
 * A breakdown from per-value sums (what the engine's `breakdown` gives: matching visits, and the
 * payments credited to them with their distinct payers), by the unfiltered breakdown's rules;
 * `unattributed`, payment counters keyed `UNATTRIBUTED_KEY` (the rollups'), gives the Unattributed row.
 */
export function breakdownOfValues(
  values: ReadonlyMap<string, { visits: number; payments: number; cents: number; customers: number }>,
  limit: number,
  unattributed: ReadonlyArray<Record<string, ValueCounters>> = [],
): { total: number; rows: BreakdownRow[] } {
  const visits = dict<number>();
  const payments = dict<ValueCounters>();
  for (const [value, v] of values) {
    if (v.visits > 0) visits[value] = v.visits;
    if (v.payments > 0) payments[value] = [v.payments, v.cents, v.customers];
  }
  return breakdownRows([visits], [payments, ...unattributed], limit);
}

/**
 * The goal keys of a visit row, one per completion (`goalKeysOf`'s keys): each goal's name, and for each
 * outbound link click with a URL its link's key.
 */
export const rowGoalKeys = (r: VisitRow): string[] => [
  ...r.goals,
  ...r.links.map((link) => goalLinkKey(OUTBOUND_GOAL, link)),
];

/**
 * The goals report under a filter (`docs/api.md` "Goals"): one row per goal name, or with `goal` that goal's
 * rows (for `Outbound Link: Click`, one per link URL).
 */
export function filteredGoals(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
  limit: number,
  goal: string | null = null,
): { visitors: number; total: number; rows: GoalRow[] } {
  const { rows, payments } = selected(input, filter, range);
  const counts = dict<number>();
  const completions = dict<number>();
  const sketches = dict<VisitorSketch>();
  for (const r of rows) {
    const keys = rowGoalKeys(r);
    for (const key of new Set(keys)) {
      counts[key] = (counts[key] ?? 0) + 1;
      const sketch = sketches[key] ?? { kind: 'exact', ids: new Set<string>() };
      if (sketch.kind === 'exact') sketch.ids.add(r.visitor_id);
      sketches[key] = sketch;
    }
    for (const key of keys) completions[key] = (completions[key] ?? 0) + 1;
  }
  const visitors = new Set(rows.map((r) => r.visitor_id)).size;
  const { total, rows: out } = goalRows(
    {
      items: [{ counts, counters: completions, valueSketches: sketches }],
      payments: [paymentCounters(payments, (r) => new Set(rowGoalKeys(r)))],
      visitors,
    },
    goal,
    limit,
  );
  return { visitors, total, rows: out };
}

/** The point period (rollup form) of a visit row or a payment, per interval. */
const PERIOD_OF: Readonly<Record<Interval, (day: string, ts: number, timezone: string) => string>> = {
  hour: (_, ts, timezone) => localHour(ts, timezone),
  day: (day) => day,
  month: (day) => day.slice(0, 7),
};

/** The time series under a filter (`docs/api.md` "Time series"): visitors distinct within each point. */
export function filteredTimeseries(
  input: FilteredInput,
  filter: Filter,
  range: DateRange,
  interval: Interval,
): TimeseriesPoint[] {
  const { rows, payments } = selected(input, filter, range);
  const periodOf = PERIOD_OF[interval];
  const visits = new Map<string, VisitRow[]>();
  for (const r of rows) {
    const period = periodOf(r.day, r.start_ms, range.timezone);
    visits.set(period, [...(visits.get(period) ?? []), r]);
  }
  const totals = new Map<string, ReturnType<typeof emptyTotals>>();
  for (const p of payments) {
    // By hour the series reads a day's item's hours; by day and month the item's own totals.
    const period = interval === 'hour' ? p.day : periodOf(p.day, p.ts, range.timezone);
    const t = totals.get(period) ?? emptyTotals();
    t.payments += 1;
    t.cents += p.cents;
    const hour = localHour(p.ts, range.timezone);
    const [n, c] = t.hours[hour] ?? [0, 0];
    t.hours[hour] = [n + 1, c + p.cents];
    totals.set(period, t);
  }
  return timeseriesPoints(
    {
      visits: [...visits].map(([period, rs]) => {
        const ids = new Set(rs.map((r) => r.visitor_id));
        return {
          period,
          visits: rs.length,
          pageviews: rs.reduce((n, r) => n + r.pageviews, 0),
          visitors: ids.size,
          sketch: { kind: 'exact', ids },
        };
      }),
      payments: [...totals].map(([period, t]) => ({ period, totals: t })),
    },
    range,
    interval,
  );
}

/** The intervals the engine sums in SQL; by hour the series reads rows (`filteredTimeseries`). */
export type SummedInterval = Exclude<Interval, 'hour'>;

/**
 * A filtered time series as the engine sums it: per point period (a day `YYYY-MM-DD` or a month `YYYY-MM`)
 * the matching visits that started in it, their page views and distinct visitors, and the counted payments
 * of the period (by their site-local day) credited to a matching visit, net USD cents.
 */
export interface FilteredSeries {
  visits: ReadonlyArray<{ period: string; visits: number; pageviews: number; visitors: number }>;
  payments: ReadonlyArray<{ period: string; payments: number; cents: number }>;
}

/** The time series from the engine's sums (`docs/api.md` "Time series"): what `filteredTimeseries` gives by day or month. */
export function timeseriesOfSeries(
  series: FilteredSeries,
  range: DateRange,
  interval: SummedInterval,
): TimeseriesPoint[] {
  return timeseriesPoints(
    {
      // One item per point: its visitors are the point's.
      visits: series.visits.map((v) => ({ ...v, sketch: null })),
      payments: series.payments.map((p) => ({
        period: p.period,
        totals: { ...emptyTotals(), payments: p.payments, cents: p.cents },
      })),
    },
    range,
    interval,
  );
}

/**
 * A filtered goals report as the engine sums it: the range's matching visits' distinct visitors, and per
 * goal name the matching visits in which it happened, its completions, their distinct visitors, and the
 * payments credited to those visits (count, net USD cents, distinct payers).
 */
export interface FilteredGoalCounts {
  visitors: number;
  goals: ReadonlyMap<
    string,
    { visits: number; completions: number; visitors: number; payments: number; cents: number; customers: number }
  >;
}

/**
 * The goals report from the engine's sums, keyed by goal key (`goalKeysOf`): one row per goal name, or with
 * `goal` that goal's rows (for `Outbound Link: Click`, one per link key): what `filteredGoals` gives.
 */
export function goalsOfCounts(
  sums: FilteredGoalCounts,
  limit: number,
  goal: string | null = null,
): { visitors: number; total: number; rows: GoalRow[] } {
  const counts = dict<number>();
  const completions = dict<number>();
  const visitors = dict<number>();
  const payments = dict<ValueCounters>();
  for (const [goal, g] of sums.goals) {
    if (g.visits > 0) {
      counts[goal] = g.visits;
      completions[goal] = g.completions;
    }
    visitors[goal] = g.visitors;
    if (g.payments > 0) payments[goal] = [g.payments, g.cents, g.customers];
  }
  const { total, rows } = goalRows(
    {
      items: [{ counts, counters: completions, valueSketches: {} }],
      payments: [payments],
      visitors: sums.visitors,
      visitorCounts: visitors,
    },
    goal,
    limit,
  );
  return { visitors: sums.visitors, total, rows };
}
