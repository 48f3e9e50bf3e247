import { OTHER_GOALS_KEY, parseGoalKey } from '../rollup.js';
import { OUTBOUND_GOAL } from '../visit.js';
import { UNATTRIBUTED_KEY, valueTotals, type ValueCounters } from '../payments/contribution.js';
import { countVisitors, unionSketches, type VisitorSketch } from '../visitor-sketch.js';
import { ratio, usd } from './periods.js';

/** Label of the row that holds goal keys beyond an item's cap (`GOAL_KEYS_PER_ITEM`). */
export const OTHER_GOALS_LABEL = '(other goals)';

/**
 * A row of the goals report (`docs/api.md`, "Goals"): a goal, or with
 * `goal=Outbound Link: Click` one link URL of it.
 */
export interface GoalRow {
  goal: string;
  /** The outbound link URL of a per-URL row; null on a goal's row. */
  link: string | null;
  /** True for the row of goal keys beyond the storage cap (`goal` is then `(other goals)`). */
  other: boolean;
  /** Distinct visitors who completed it in visits that started in the range. */
  visitors: number;
  /** Visits that started in the range in which it happened. */
  visits: number;
  /** Its events (completions) in those visits. */
  completions: number;
  /** visitors / the range's visitors; null when the range has no visitor. */
  conversion_rate: number | null;
  /** Payments of the range credited to a visit in which it happened. */
  payments: number;
  /** USD of those payments, net of refunds. */
  revenue_usd: number;
}

/** What the goals report reads for one range. */
export interface GoalsInput {
  /** The `goal` rollup items of the range: visits, completions and a visitor sketch per goal key. */
  items: ReadonlyArray<{
    counts: Readonly<Record<string, number>>;
    counters: Readonly<Record<string, number>>;
    valueSketches: Readonly<Record<string, VisitorSketch>>;
  }>;
  /** The `goal` payment counters of the range, per goal key of the credited visit (PAYMENT_DIMENSION items). */
  payments: ReadonlyArray<Record<string, ValueCounters>>;
  /** Distinct visitors of the range (the overview's `visitors`). */
  visitors: number;
  /**
   * Distinct visitors per goal key counted exactly by the caller (the filtered engine's SQL), standing in
   * for the items' `valueSketches` of that key.
   */
  visitorCounts?: Readonly<Record<string, number>>;
  /**
   * Imported days' custom events per goal key, `[visitors, events]` summed over days: they add to the
   * row's visitors and completions, and to its visits as visitors (Plausible exports no visits per goal).
   */
  imported?: ReadonlyMap<string, readonly [number, number]>;
}

/**
 * The rows of the goals report: one per goal name, or, with `goal`, the rows
 * of that goal only — for `Outbound Link: Click`, one per link URL. Visits,
 * completions and visitors come from visits that started in the range;
 * revenue from the range's payments credited to a visit with the goal key.
 * Ordered like breakdowns (revenue, then visitors, then label, `docs/api.md`);
 * `total` is the row count before `limit`.
 */
export function goalRows(input: GoalsInput, goal: string | null, limit: number): { total: number; rows: GoalRow[] } {
  const wanted = (key: string): boolean => {
    if (key === OTHER_GOALS_KEY) return goal === null;
    const parsed = parseGoalKey(key);
    if (goal === null) return parsed.link === null;
    if (parsed.goal !== goal) return false;
    // The outbound goal's rows are its URLs; any other goal has its own row only.
    return goal === OUTBOUND_GOAL ? parsed.link !== null : parsed.link === null;
  };
  const acc = new Map<
    string,
    {
      visits: number;
      completions: number;
      sketches: VisitorSketch[];
      imported: number;
      payments: number;
      cents: number;
    }
  >();
  const row = (key: string) => {
    let r = acc.get(key);
    if (!r) acc.set(key, (r = { visits: 0, completions: 0, sketches: [], imported: 0, payments: 0, cents: 0 }));
    return r;
  };
  for (const item of input.items) {
    for (const [key, n] of Object.entries(item.counts)) if (wanted(key)) row(key).visits += n;
    for (const [key, n] of Object.entries(item.counters)) if (wanted(key)) row(key).completions += n;
    for (const [key, sketch] of Object.entries(item.valueSketches)) if (wanted(key)) row(key).sketches.push(sketch);
  }
  for (const [key, [visitors, events]] of input.imported ?? []) {
    if (!wanted(key)) continue;
    const r = row(key);
    r.imported += visitors;
    r.visits += visitors;
    r.completions += events;
  }
  for (const [key, t] of valueTotals(input.payments)) {
    if (key === UNATTRIBUTED_KEY || !wanted(key)) continue;
    const r = row(key);
    r.payments += t.payments;
    r.cents += t.cents;
  }
  const rows: GoalRow[] = [...acc]
    .map(([key, r]) => {
      const counted =
        input.visitorCounts?.[key] ?? (r.sketches.length > 0 ? countVisitors(unionSketches(r.sketches)) : 0);
      const visitors = counted + r.imported;
      const other = key === OTHER_GOALS_KEY;
      const parsed = parseGoalKey(key);
      return {
        goal: other ? OTHER_GOALS_LABEL : parsed.goal,
        link: other ? null : parsed.link,
        other,
        visitors,
        visits: r.visits,
        completions: r.completions,
        conversion_rate: input.visitors > 0 ? ratio(visitors / input.visitors) : null,
        payments: r.payments,
        revenue_usd: usd(r.cents),
      };
    })
    .filter((r) => r.visits !== 0 || r.completions !== 0 || r.payments !== 0);
  const label = (r: GoalRow) => r.link ?? r.goal;
  rows.sort((a, b) => b.revenue_usd - a.revenue_usd || b.visitors - a.visitors || label(a).localeCompare(label(b)));
  return { total: rows.length, rows: rows.slice(0, limit) };
}
