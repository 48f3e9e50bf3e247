import { BadParameterError } from '../domain/errors.js';
import { goalLinkKey } from '../domain/rollup.js';
import type { DateRange } from '../domain/range.js';
import type { SiteConfig } from '../domain/site.js';
import type { Dimension } from '../domain/rollup.js';
import { EVERY_VISIT, type Filter } from '../domain/reports/filters.js';
import type { OverviewTotals } from '../domain/reports/overview.js';
import type { BreakdownRow } from '../domain/reports/breakdown.js';
import type { GoalRow } from '../domain/reports/goals.js';
import type { Interval, TimeseriesPoint } from '../domain/reports/timeseries.js';
import {
  breakdownOfValues,
  filteredTimeseries,
  goalsOfCounts,
  overviewOfCounts,
  timeseriesOfSeries,
} from '../domain/reports/filtered.js';
import { OUTBOUND_GOAL } from '../domain/visit.js';
import type { FilteredRange, FilteredVisits, ReportReads, VisitorCounting } from '../ports.js';
import { customerHash, type ListClass, type ValueCounters } from '../domain/payments/contribution.js';
import { cohortOf } from '../domain/reports/cohorts.js';
import type { RetentionCohorts } from '../domain/reports/retention.js';

/**
 * The reports of a request with `filters` (`docs/api.md`, "Filters"): read
 * from the visit and payments tables (`FilteredVisits`), never from the
 * rollups, by the unfiltered reports' own definitions
 * (`lambdas/domain/reports/filtered.ts`). Imported days hold no visits, so
 * they are left out (the answer's `filtered.imported_excluded` says which).
 */

/**
 * The engine, or a 400 naming `parameter` (`filters`, or the breakdown's `dimension` for a property) where none is deployed.
 * @throws BadParameterError (400) when the deployment has no filtered engine (`docs/data-model.md`, "Filtered reports")
 */
export function engineOf(filtered: FilteredVisits | undefined, parameter = 'filters'): FilteredVisits {
  if (!filtered)
    throw new BadParameterError(
      parameter,
      'this deployment does not answer filtered reports (an AWS stack answers them unless deployed with -c filteredReports=false: docs/deploy.md)',
    );
  return filtered;
}

/** The engine's range: the report's days (a payment carries its credited visit, however old). */
const filteredRange = (range: Pick<DateRange, 'from' | 'to'>): FilteredRange => ({
  from: range.from,
  to: range.to,
});

/**
 * Overview totals of a range under a filter: the matching visits' sums and their credited payments (two
 * queries); visitors counted by `visitors` (`registers` where the unfiltered union is registers, `docs/api.md`).
 */
export async function filteredTotals(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  visitors: VisitorCounting,
): Promise<OverviewTotals> {
  const r = filteredRange(range);
  const [visits, payments] = await Promise.all([
    engine.totals(site.domain, filter, r, visitors),
    engine.payments(site.domain, filter, r),
  ]);
  return overviewOfCounts({ ...visits, ...payments });
}

/** A breakdown under a filter (`docs/api.md` "Breakdowns"; no Unattributed row: a payment with no credited visit matches no filter). */
export async function filteredBreakdownRows(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  dimension: Dimension,
  limit: number,
): Promise<{ total: number; rows: BreakdownRow[] }> {
  return breakdownOfValues(await engine.breakdown(site.domain, filter, filteredRange(range), dimension), limit);
}

/**
 * A custom property's breakdown (`breakdown/prop:<key>`, `docs/api.md` "Breakdowns"): read from the visit
 * table whether filtered or not, since no rollup keeps properties. Under a filter, the matching visits and
 * the payments credited to them; without one (`filter` null), every visit, and the Unattributed row from the
 * payment rollups' counters (`unattributed`), as the other breakdowns show it.
 */
export async function propBreakdownRows(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter | null,
  range: DateRange,
  key: string,
  limit: number,
  unattributed: () => Promise<ReadonlyArray<Record<string, ValueCounters>>>,
): Promise<{ total: number; rows: BreakdownRow[] }> {
  const [values, extra] = await Promise.all([
    engine.propBreakdown(site.domain, filter ?? EVERY_VISIT, filteredRange(range), key),
    filter ? [] : unattributed(),
  ]);
  return breakdownOfValues(values, limit, extra);
}

/**
 * The goals report under a filter, one row per goal name; with `goal`, that goal's row, and with
 * `goal=Outbound Link: Click` one row per link URL (`docs/api.md`, "Goals"). The report's visitors are counted
 * by `counting.visitors`, those of the goals in `counting.goals` and the links in `counting.links` by
 * registers (`registerGoals`, `registerLinks`), the others' exactly.
 */
export async function filteredGoalRows(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  goal: string | null,
  limit: number,
  counting: { visitors: VisitorCounting; goals: readonly string[]; links?: readonly string[] },
): Promise<{ visitors: number; total: number; rows: GoalRow[] }> {
  const r = filteredRange(range);
  if (goal === OUTBOUND_GOAL) {
    const sums = await engine.links(site.domain, filter, r, counting.visitors, counting.links ?? []);
    const byKey = new Map([...sums.goals].map(([link, g]) => [goalLinkKey(OUTBOUND_GOAL, link), g]));
    return goalsOfCounts({ visitors: sums.visitors, goals: byKey }, limit, OUTBOUND_GOAL);
  }
  const sums = await engine.goals(site.domain, filter, r, counting.visitors, counting.goals);
  const all = goalsOfCounts(sums, goal === null ? limit : Number.MAX_SAFE_INTEGER);
  if (goal === null) return all;
  const rows = all.rows.filter((row) => row.goal === goal);
  return { visitors: all.visitors, total: rows.length, rows };
}

/**
 * The time series under a filter (`docs/api.md` "Time series"): by day and month the engine's sums, the
 * visitors of the points in `registers` counted by registers (`registerPoints`); by hour (ranges of at most
 * `INTERVAL_MAX_DAYS.hour` days) the matching rows, whose local hours the domain knows.
 */
export async function filteredPoints(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  interval: Interval,
  registers: readonly string[],
): Promise<TimeseriesPoint[]> {
  const r = filteredRange(range);
  if (interval === 'hour')
    return filteredTimeseries(await engine.input(site.domain, filter, r), filter, range, interval);
  return timeseriesOfSeries(await engine.series(site.domain, filter, r, interval, registers), range, interval);
}

/**
 * A page of the payments list under a filter (`docs/api.md`, "Filters"): the keys of the range's payments of
 * `cls` credited to a matching visit, newest first, and how many there are. An Unattributed payment matches
 * no filter, so `unattributed` is empty.
 */
export function filteredPaymentPage(
  engine: FilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  cls: ListClass,
  offset: number,
  limit: number,
): Promise<{ total: number; keys: string[] }> {
  return engine.paymentList(site.domain, filter, filteredRange(range), cls, offset, limit);
}

/**
 * Retention's cohorts under a filter (`docs/api.md`, "Filters"; `docs/retention.md`): the customers whose first
 * payment falls in the range (and, for `churn_30d`, in the window) and was credited to a matching visit, with
 * their stored summaries (`cohortMembers`), so every formula is the unfiltered one over fewer customers.
 * `firstDay` and `sources` stay the site's (`unfiltered`): days of data and providers are not a property of
 * a visit.
 */
export async function filteredRetentionCohorts(
  engine: FilteredVisits,
  store: Pick<ReportReads, 'cohortMembers'>,
  namespace: string,
  site: SiteConfig,
  filter: Filter,
  days: { range: Pick<DateRange, 'from' | 'to'>; window: Pick<DateRange, 'from' | 'to'> },
  unfiltered: Pick<RetentionCohorts, 'firstDay' | 'sources'>,
): Promise<RetentionCohorts> {
  const cohort = async (span: Pick<DateRange, 'from' | 'to'>) => {
    const [payers, members] = await Promise.all([
      engine.firstPayers(site.domain, filter, filteredRange(span)),
      store.cohortMembers(namespace, span.from, span.to),
    ]);
    return cohortOf(members.filter((m) => payers.has(customerHash(m.payer))).map((m) => m.summary));
  };
  const [considered, window] = await Promise.all([cohort(days.range), cohort(days.window)]);
  return { considered, window, firstDay: unfiltered.firstDay, sources: unfiltered.sources };
}
