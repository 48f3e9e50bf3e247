import type { DateRange } from '../range.js';
import { OUTBOUND_GOAL } from '../visit.js';
import { parseGoalKey } from '../rollup.js';
import { EXACT_LIMIT, type VisitorSketch } from '../visitor-sketch.js';
import { periodSpans, type PeriodSpan } from './periods.js';

/**
 * Which distinct-visitor figures of a filtered report are counted by registers (`docs/api.md`, "Filters"):
 * exactly where the unfiltered report would be exact, by the unfiltered sketch's registers elsewhere
 * (`docs/data-model.md`, "Filtered reports": its part on matching the unfiltered sketch). The unfiltered report unions
 * the visitor sets of a range's periods (`periodSpans`: days at the ends, whole months between), exact when
 * every one is; a series point by day is its day's set, by month its month's set or the union of its days'.
 * A period's set is registers when it counted more than `EXACT_LIMIT` visitors (its ROLLUP_COUNTS `u`): a
 * register set whose estimate falls at or under the limit (a true count just past it) is then taken as
 * exact, and counted exactly, within the sketch's error of the unfiltered figure.
 */

/** The unfiltered periods whose visitor sets decide a filtered report's counting: the series by day reads its days. */
export function unfilteredSpans(range: Pick<DateRange, 'from' | 'to'>, interval: 'day' | 'month' | null): PeriodSpan[] {
  return interval === 'day' ? [{ granularity: 'D', from: range.from, to: range.to }] : periodSpans(range);
}

/**
 * The points counted by registers: those of a period (read over `unfilteredSpans`) whose unfiltered set is
 * registers, as `YYYY-MM-DD` by day and `YYYY-MM` by month; by `null` (the overview, goals: the range is one
 * union), the range itself as `range` when any period's set is registers, else none.
 */
export function registerPoints(
  counts: ReadonlyArray<{ period: string; visitors: number }>,
  interval: 'day' | 'month' | null,
): string[] {
  const registers = counts.filter((c) => c.visitors > EXACT_LIMIT).map((c) => c.period);
  if (interval === null) return registers.length > 0 ? ['range'] : [];
  return [...new Set(registers.map((p) => (interval === 'day' ? p : p.slice(0, 7))))].sort();
}

/**
 * The goal names whose visitors a filtered goals report counts by the goal sketches' registers
 * (`GOAL_VISITOR_LIMITS`): those with a register sketch under any of their keys (the name, or a link's key)
 * in the `goal` rollups the unfiltered report unions (read over `periodSpans`), where its row is an estimate.
 */
export function registerGoals(
  items: ReadonlyArray<{ valueSketches: Readonly<Record<string, VisitorSketch>> }>,
): string[] {
  const names = new Set<string>();
  for (const item of items)
    for (const [key, sketch] of Object.entries(item.valueSketches))
      if (sketch.kind === 'hll') names.add(parseGoalKey(key).goal);
  return [...names].sort();
}

/**
 * The outbound link URLs whose visitors a filtered goals report with `goal=Outbound Link: Click` counts by the
 * goal sketches' registers: those whose link key has a register sketch in the `goal` rollups the unfiltered
 * report unions, as `registerGoals` for names.
 */
export function registerLinks(
  items: ReadonlyArray<{ valueSketches: Readonly<Record<string, VisitorSketch>> }>,
): string[] {
  const links = new Set<string>();
  for (const item of items)
    for (const [key, sketch] of Object.entries(item.valueSketches)) {
      const { goal, link } = parseGoalKey(key);
      if (sketch.kind === 'hll' && goal === OUTBOUND_GOAL && link !== null) links.add(link);
    }
  return [...links].sort();
}
