import { relativeChange, type OverviewTotals } from '../reports/overview.js';
import type { BreakdownRow } from '../reports/breakdown.js';
import type { GoalRow } from '../reports/goals.js';
import type { DateRange } from '../range.js';
import type { ReportKind } from './period.js';

/** Rows of each list in a summary. */
export const SUMMARY_ROWS = 5;

/** A figure of the summary: this period's value, the previous period's, and the relative change (null when the previous is 0). */
export interface SummaryFigure {
  value: number;
  previous: number;
  change: number | null;
}

/** The top stats a summary shows, in order, with their labels (each says what it counts, as the dashboard's tiles do: `docs/app.md`). */
export const SUMMARY_TOTALS = [
  ['visitors', 'Unique visitors'],
  ['sessions', 'Visits'],
  ['pageviews', 'Pageviews'],
  ['revenue_usd', 'Revenue (USD)'],
] as const satisfies ReadonlyArray<readonly [keyof OverviewTotals, string]>;

/** A row of a list: its label, visits (visitors for goals) and revenue in USD, each against the previous period. */
export interface SummaryRow {
  label: string;
  count: SummaryFigure;
  revenue_usd: SummaryFigure;
}

/** One list of a summary (`SUMMARY_LISTS`). */
export interface SummaryList {
  title: string;
  /** What `count` counts: `Visits` for breakdowns (visits that started in the period), `Visitors` for goals. */
  counts: string;
  rows: SummaryRow[];
}

/** The lists a summary shows: title, and the report it comes from. */
export const SUMMARY_LISTS = [
  { key: 'channel', title: 'Top channels' },
  { key: 'referrer', title: 'Top sources' },
  { key: 'page', title: 'Top pages' },
  { key: 'goal', title: 'Goals' },
] as const;
export type SummaryListKey = (typeof SUMMARY_LISTS)[number]['key'];

/** A whole summary, what the template renders. */
export interface EmailSummary {
  site: string;
  kind: ReportKind;
  range: DateRange;
  previous_range: DateRange;
  totals: Array<{ key: (typeof SUMMARY_TOTALS)[number][0]; label: string } & SummaryFigure>;
  lists: SummaryList[];
}

/** A list's rows of one period as the report service answers them: breakdown rows, or goal rows. */
export type ListRows = ReadonlyArray<BreakdownRow> | ReadonlyArray<GoalRow>;

/** What a summary is made of: the report service's answers for the period and the period before. */
export interface SummaryInput {
  site: string;
  kind: ReportKind;
  range: DateRange;
  previous_range: DateRange;
  current: OverviewTotals;
  previous: OverviewTotals;
  /** Per list, this period's rows (at most `SUMMARY_ROWS` are shown) and the previous period's (all of them, to match labels). */
  lists: Readonly<Record<SummaryListKey, { current: ListRows; previous: ListRows }>>;
}

const figure = (value: number, previous: number): SummaryFigure => ({
  value,
  previous,
  change: relativeChange(value, previous),
});

type Row = BreakdownRow | GoalRow;
const labelOf = (row: Row) => ('goal' in row ? row.goal : row.label);
const countOf = (row: Row) => row.visitors;

/**
 * The summary of one period: the overview's totals and, per list, the first `SUMMARY_ROWS` rows of
 * the period, each matched by label with the previous period's row (0 when it had none, so its
 * change is null as in the overview's `change`, `relativeChange`). No figure is computed here: each
 * comes from the report service's answer (`lambdas/services/reports.ts`).
 */
export function buildSummary(input: SummaryInput): EmailSummary {
  return {
    site: input.site,
    kind: input.kind,
    range: input.range,
    previous_range: input.previous_range,
    totals: SUMMARY_TOTALS.map(([key, label]) => ({
      key,
      label,
      ...figure(input.current[key] ?? 0, input.previous[key] ?? 0),
    })),
    lists: SUMMARY_LISTS.map(({ key, title }) => {
      const { current, previous } = input.lists[key];
      const before = new Map((previous as readonly Row[]).map((r) => [labelOf(r), r]));
      return {
        title,
        counts: key === 'goal' ? 'Visitors' : 'Visits',
        rows: (current as readonly Row[]).slice(0, SUMMARY_ROWS).map((row) => {
          const old = before.get(labelOf(row));
          return {
            label: labelOf(row),
            count: figure(countOf(row), old ? countOf(old) : 0),
            revenue_usd: figure(row.revenue_usd, old ? old.revenue_usd : 0),
          };
        }),
      };
    }),
  };
}
