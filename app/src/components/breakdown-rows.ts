import type { BreakdownRow } from '../api.js';

/** The columns a breakdown table sorts by: the row fields of `docs/api.md` "Breakdowns" the table shows. */
export type SortColumn = 'visitors' | 'payments' | 'revenue_usd' | 'revenue_per_visitor';

/** The API's own order (`docs/api.md` "Breakdowns": revenue, then visitors, both descending). */
export const DEFAULT_SORT: SortColumn = 'revenue_usd';

/** A row that is not a value of the dimension: Unattributed (payments with no credited visit), or no value (`key` null). */
export const isPinned = (row: BreakdownRow): boolean => row.unattributed || row.key === null;

/**
 * The rows in table order: the values of the dimension by `column`,
 * descending (ties keep the API's order, which is revenue, visits, label),
 * then the rows that are no value of it (no campaign, Direct, Unattributed) at
 * the bottom, so they never sit mid-list or top a panel. A null
 * `revenue_per_visitor` sorts last. Does not change `rows`.
 */
export function orderRows(rows: readonly BreakdownRow[], column: SortColumn): BreakdownRow[] {
  const value = (r: BreakdownRow) => r[column] ?? -Infinity;
  const values = rows.filter((r) => !isPinned(r));
  const pinned = rows.filter(isPinned);
  const indexed = values.map((r, i) => ({ r, i }));
  indexed.sort((a, b) => value(b.r) - value(a.r) || a.i - b.i);
  // No value first, then Unattributed last: the latter is about payments, not visits.
  pinned.sort((a, b) => Number(a.unattributed) - Number(b.unattributed));
  return [...indexed.map((x) => x.r), ...pinned];
}

/** A row's bar as a share (0–1) of the largest value of `column` among the values of the dimension; pinned rows get none. */
export function barShare(row: BreakdownRow, rows: readonly BreakdownRow[], column: SortColumn): number {
  if (isPinned(row)) return 0;
  const max = Math.max(0, ...rows.filter((r) => !isPinned(r)).map((r) => r[column] ?? 0));
  return max > 0 ? Math.max(0, row[column] ?? 0) / max : 0;
}
