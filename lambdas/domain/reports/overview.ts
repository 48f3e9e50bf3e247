import { countVisitors, unionSketches, type VisitorSketch } from '../visitor-sketch.js';
import {
  attributedOf,
  convertedIn,
  customersIn,
  matchedIn,
  type PeriodCustomers,
  type PeriodTotals,
} from '../payments/contribution.js';
import type { DateRange } from '../range.js';
import { ratio, usd } from './periods.js';
import { VISIT_COUNTERS, type VisitCounter } from '../rollup.js';
import { importedTopStatsItem, type ImportedVisits } from '../imported/aggregate.js';

/**
 * Overview totals (`docs/api.md` "Overview"), and the top stats (`docs/api.md`,
 * "Top stats"): `pageviews`; `views_per_visit` = pageviews / sessions;
 * `bounce_rate` = visits with one page view and no goal / sessions;
 * `visit_duration` = mean seconds from first to last event of the visits with
 * more than one event, rounded to whole seconds. Each is null without a
 * visit (or, for the duration, without a visit of two events or more).
 */
export interface OverviewTotals {
  visitors: number;
  sessions: number;
  pageviews: number;
  views_per_visit: number | null;
  bounce_rate: number | null;
  visit_duration: number | null;
  payments: number;
  customers: number;
  revenue_usd: number;
  converted: number;
  matched_payments: number;
  matched_revenue_usd: number;
  conversion: number | null;
  revenue_per_visitor: number | null;
}

/**
 * Whether a range's `visits` items read with its open month's monthly item
 * (`openMonthSpans`) union to the visitors of the same items read with that
 * month's days: yes when the month's set is exact (then so are its days, and
 * their ids are its ids), or when another item's set is registers (the union
 * is registers either way, and the month's registers are its days' combined,
 * `lambdas/domain/visitor-sketch.ts`); else the days must be read, since
 * exact sets union exactly whatever their size.
 * @param items the items read over `openMonthSpans(range, open)`
 */
export function openMonthSetStandsIn(
  items: ReadonlyArray<{ period: string; sketch: VisitorSketch }>,
  open: string,
): boolean {
  const month = items.find((i) => i.period === open);
  return !month || month.sketch.kind === 'exact' || items.some((i) => i !== month && i.sketch.kind === 'hll');
}

/** What the overview reads for one range: the visits rollups, and the payment counters and payers of the range's periods. */
export interface OverviewInput {
  visits: ReadonlyArray<{
    visits: number;
    pageviews: number;
    counters: Readonly<Record<string, number>>;
    sketch: VisitorSketch;
  }>;
  payments: ReadonlyArray<PeriodTotals>;
  payers: ReadonlyArray<PeriodCustomers>;
  /** The range's imported days summed (`docs/ingestion.md`, "Importing a Plausible export"), if it has any. */
  imported?: ImportedVisits;
}

/**
 * Totals of one range (`docs/api.md` "Overview"). A payment counts when it did not fail; it
 * is matched when its credited visit started in the range (its visitor was
 * tracked in the range); `converted` counts the distinct customers of matched
 * payments. `conversion` and `revenue_per_visitor` stay null until a payment
 * is matched. Imported days add their visitors (a sum of daily visitors), visits, page views,
 * bounces and durations; `conversion` and `revenue_per_visitor` stay over tracked visitors, as no
 * payment is credited to an imported visit.
 */
export function overviewTotals(input: OverviewInput, range: Pick<DateRange, 'from' | 'to'>): OverviewTotals {
  const tracked = countVisitors(unionSketches(input.visits.map((v) => v.sketch)));
  const imported = input.imported;
  const visitors = tracked + (imported?.visitors ?? 0);
  const sessions = input.visits.reduce((n, v) => n + v.visits, 0) + (imported?.visits ?? 0);
  const top = topStats(imported ? [...input.visits, importedTopStatsItem(imported)] : input.visits);
  let payments = 0;
  let cents = 0;
  let matched = 0;
  let matchedCents = 0;
  let attributed = 0;
  for (const t of input.payments) {
    payments += t.payments;
    cents += t.cents;
    const [n, c] = matchedIn(t, range.from, range.to);
    matched += n;
    matchedCents += c;
    attributed += attributedOf(t);
  }
  const customers = customersIn(input.payers);
  const converted = convertedIn(input.payers, range.from, range.to, matched, attributed);
  return {
    visitors,
    sessions,
    ...top,
    payments,
    customers,
    revenue_usd: usd(cents),
    converted,
    matched_payments: matched,
    matched_revenue_usd: usd(matchedCents),
    conversion: matched > 0 && tracked > 0 ? ratio(converted / tracked) : null,
    revenue_per_visitor: matched > 0 && tracked > 0 ? ratio(matchedCents / 100 / tracked) : null,
  };
}

/** The sums a range's top stats are computed from: one entry per `visits` rollup item read. */
export type TopStatsInput = ReadonlyArray<{
  visits: number;
  pageviews: number;
  counters: Readonly<Record<string, number>>;
}>;

/**
 * Page views, views per visit, bounce rate and visit duration of the visits
 * items of a range (formulas on `OverviewTotals`; counters in
 * `VISIT_COUNTERS`, `lambdas/domain/rollup.ts`).
 */
export function topStats(
  items: TopStatsInput,
): Pick<OverviewTotals, 'pageviews' | 'views_per_visit' | 'bounce_rate' | 'visit_duration'> {
  let visits = 0;
  let pageviews = 0;
  const sums: Record<VisitCounter, number> = { bounces: 0, timed_visits: 0, duration_ms: 0 };
  for (const item of items) {
    visits += item.visits;
    pageviews += item.pageviews;
    for (const name of VISIT_COUNTERS) sums[name] += item.counters[name] ?? 0;
  }
  return {
    pageviews,
    views_per_visit: visits > 0 ? ratio(pageviews / visits) : null,
    bounce_rate: visits > 0 ? ratio(sums.bounces / visits) : null,
    visit_duration: sums.timed_visits > 0 ? Math.round(sums.duration_ms / 1000 / sums.timed_visits) : null,
  };
}

/** Relative change (`docs/api.md` "Overview"): `(current - previous) / previous`, null when previous is 0 or missing. */
export function relativeChange(current: number | null, previous: number | null): number | null {
  if (current === null || previous === null || previous === 0) return null;
  return ratio((current - previous) / previous);
}

/** The fields of `change`: those of `docs/api.md` "Overview", then the top stats' ("Top stats (overview)"). */
export const CHANGE_KEYS = [
  'visitors',
  'revenue_usd',
  'payments',
  'conversion',
  'revenue_per_visitor',
  'sessions',
  'pageviews',
  'views_per_visit',
  'bounce_rate',
  'visit_duration',
] as const;

/** The `change` object of the overview. */
export function overviewChange(
  current: OverviewTotals,
  previous: OverviewTotals,
): Record<(typeof CHANGE_KEYS)[number], number | null> {
  return Object.fromEntries(CHANGE_KEYS.map((k) => [k, relativeChange(current[k], previous[k])])) as Record<
    (typeof CHANGE_KEYS)[number],
    number | null
  >;
}
