import * as z from 'zod';
import { DIMENSIONS, NONE, type Dimension } from '../rollup.js';
import { dict, type Dict } from '../dict.js';

/**
 * What imported days hold (`docs/ingestion.md`, "Importing a Plausible export"), by metric: `visits`
 * (one key, `NONE`: `[visitors, visits, pageviews, bounces, duration s]`), each breakdown dimension
 * (per value `[visits]`), `goal` (per goal key `[visitors, events]`).
 */
export const IMPORTED_METRICS = ['visits', ...DIMENSIONS, 'goal'] as const;
export type ImportedMetric = 'visits' | Dimension | 'goal';

/** The number of counts each key of a metric holds. */
export const IMPORTED_WIDTH = (metric: ImportedMetric): number => (metric === 'visits' ? 5 : metric === 'goal' ? 2 : 1);

/** The import a site holds: where it came from and its days (site-local, inclusive). */
export interface ImportedSpan {
  source: 'plausible';
  from: string;
  to: string;
}

/** The import a site holds (item IMPORT_STATE), written last, so that reports read imported days only once all are written. */
export const importStateSchema = z.object({
  source: z.literal('plausible'),
  from: z.string(),
  to: z.string(),
  /** The cut-over day chosen (`--until`): imported days are before it. */
  until: z.string(),
  imported_at: z.number(),
  /** Rows read, kept and skipped per file of the export. */
  files: z.array(z.object({ file: z.string(), read: z.number(), kept: z.number(), skipped: z.number() })).max(20),
});
export type ImportState = z.infer<typeof importStateSchema>;

/** One period's counts of one metric: key → counts (a null-prototype record: keys are visitors' text). */
export interface ImportedPeriod {
  metric: ImportedMetric;
  granularity: 'D' | 'M';
  period: string;
  entries: Dict<number[]>;
}

/**
 * The daily and monthly sums of an import's rows: every cell added to its day and to the day's month
 * (`D`, `M` as the rollups: a range reads whole months from the month's sum, `periodSpans`). Numbers add
 * up; a month's `visitors` is the sum of its days' (an upper bound of its distinct visitors).
 */
export class ImportedAggregate {
  private readonly periods = new Map<string, ImportedPeriod>();
  private readonly dayList = new Set<string>();

  add(day: string, cells: ReadonlyArray<{ metric: ImportedMetric; key: string; numbers: readonly number[] }>): void {
    this.dayList.add(day);
    for (const cell of cells) {
      this.addTo(cell.metric, 'D', day, cell.key, cell.numbers);
      this.addTo(cell.metric, 'M', day.slice(0, 7), cell.key, cell.numbers);
    }
  }

  private addTo(
    metric: ImportedMetric,
    granularity: 'D' | 'M',
    period: string,
    key: string,
    numbers: readonly number[],
  ) {
    const id = `${metric} ${granularity}#${period}`;
    let p = this.periods.get(id);
    if (!p) this.periods.set(id, (p = { metric, granularity, period, entries: dict() }));
    const sums = (p.entries[key] ??= new Array<number>(IMPORTED_WIDTH(metric)).fill(0));
    numbers.forEach((n, i) => (sums[i] = (sums[i] ?? 0) + n));
  }

  /** Every period's counts, in no particular order. */
  all(): ImportedPeriod[] {
    return [...this.periods.values()];
  }

  /** The first and last day of a kept row, or null when no row was kept. */
  span(): ImportedSpan | null {
    const days = [...this.dayList].sort();
    return days.length === 0 ? null : { source: 'plausible', from: days[0]!, to: days[days.length - 1]! };
  }
}

/** The imported days of `range` (the import's days within it), or null when it holds none. */
export function importedIn(span: ImportedSpan | null, range: { from: string; to: string }): ImportedSpan | null {
  if (!span) return null;
  const from = span.from > range.from ? span.from : range.from;
  const to = span.to < range.to ? span.to : range.to;
  return from <= to ? { source: span.source, from, to } : null;
}

/** Imported visits of a range: sums over its periods (visitors summed: an upper bound of distinct ones). */
export interface ImportedVisits {
  visitors: number;
  visits: number;
  pageviews: number;
  bounces: number;
  duration_s: number;
}

/** The `visits` counts of a period (zeros without them). */
export function importedVisitsOf(period: Pick<ImportedPeriod, 'entries'>): ImportedVisits {
  const [visitors = 0, visits = 0, pageviews = 0, bounces = 0, duration_s = 0] = period.entries[NONE] ?? [];
  return { visitors, visits, pageviews, bounces, duration_s };
}

/** The sum of `visits` periods. */
export function sumImportedVisits(periods: ReadonlyArray<Pick<ImportedPeriod, 'entries'>>): ImportedVisits {
  const total: ImportedVisits = { visitors: 0, visits: 0, pageviews: 0, bounces: 0, duration_s: 0 };
  for (const p of periods) {
    const v = importedVisitsOf(p);
    total.visitors += v.visitors;
    total.visits += v.visits;
    total.pageviews += v.pageviews;
    total.bounces += v.bounces;
    total.duration_s += v.duration_s;
  }
  return total;
}

/**
 * Imported visits as a `visits` rollup item's sums for the top stats (`topStats`): Plausible's
 * duration is a total over all visits with a bounce lasting 0 s, ours a mean over visits of two
 * events or more, so the imported visits that did not bounce are the timed ones.
 */
export function importedTopStatsItem(v: ImportedVisits): {
  visits: number;
  pageviews: number;
  counters: Record<string, number>;
} {
  return {
    visits: v.visits,
    pageviews: v.pageviews,
    counters: dict({
      bounces: v.bounces,
      timed_visits: Math.max(0, v.visits - v.bounces),
      duration_ms: v.duration_s * 1000,
    }),
  };
}

/** A dimension's imported periods as breakdown value counts (value → visits). */
export function importedValueCounts(periods: ReadonlyArray<Pick<ImportedPeriod, 'entries'>>): Array<Dict<number>> {
  return periods.map((p) => dict(Object.entries(p.entries).map(([key, [n = 0]]) => [key, n] as const)));
}

/** Imported goal counts of periods: goal key → `[visitors, events]` summed. */
export function importedGoalCounts(
  periods: ReadonlyArray<Pick<ImportedPeriod, 'entries'>>,
): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const p of periods)
    for (const [key, [visitors = 0, events = 0]] of Object.entries(p.entries)) {
      const sums = out.get(key) ?? [0, 0];
      out.set(key, [sums[0] + visitors, sums[1] + events]);
    }
  return out;
}
