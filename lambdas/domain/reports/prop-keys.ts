import type { DateRange } from '../range.js';
import { selected, type FilteredInput } from './filtered.js';
import type { Filter } from './filters.js';
import { usd } from './periods.js';

/**
 * The custom property keys of a range (`docs/api.md`, "Properties"): which
 * keys the site's page views and goals carried, in the visits that started
 * in the range (and matched the filters), with how many visitors, visits and
 * credited payments had each. What the app's Properties panel lists in its
 * key picker and the filter dialog suggests; the values of one key are its
 * breakdown, `breakdown/prop:<key>`.
 */

/** Per key: the visits that had it (any value), their distinct visitors, and the counted payments credited to them (USD cents, net). */
export interface PropKeyCounts {
  visitors: number;
  visits: number;
  payments: number;
  cents: number;
}

/** A row of the properties report. */
export interface PropKeyRow {
  key: string;
  visitors: number;
  visits: number;
  payments: number;
  revenue_usd: number;
}

/** Binary order of UTF-16 code units: the same on every machine, unlike `localeCompare`. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The report's rows from per-key counts: most visitors first, then most visits, then the key in code-unit
 * order (so a tie always sorts the same way); `total` counts every key, `rows` the first `limit`.
 */
export function propKeyRows(
  counts: ReadonlyMap<string, PropKeyCounts>,
  limit: number,
): { total: number; rows: PropKeyRow[] } {
  const rows = [...counts]
    // A key of payments alone: credited to visits that started before the range (as a breakdown lists them).
    .filter(([, c]) => c.visits > 0 || c.payments > 0)
    .map(([key, c]): PropKeyRow => ({
      key,
      visitors: c.visitors,
      visits: c.visits,
      payments: c.payments,
      revenue_usd: usd(c.cents),
    }))
    .sort((a, b) => b.visitors - a.visitors || b.visits - a.visits || byCodeUnits(a.key, b.key));
  return { total: rows.length, rows: rows.slice(0, limit) };
}

/**
 * Per-key counts computed directly from visit rows and credited payments: the reference the SQL engine's
 * `propKeys` is tested against. A visit counts once under each key it had, whatever its number of values;
 * a payment counts once under each key its credited visit had (so payments of several keys add up to more
 * than the overview's, as a page breakdown's do).
 */
export function filteredPropKeys(
  input: FilteredInput,
  filter: Filter,
  range: Pick<DateRange, 'from' | 'to'>,
): Map<string, PropKeyCounts> {
  const { rows, payments } = selected(input, filter, range);
  const out = new Map<string, PropKeyCounts & { ids: Set<string> }>();
  const entry = (key: string) => {
    let c = out.get(key);
    if (!c) out.set(key, (c = { visitors: 0, visits: 0, payments: 0, cents: 0, ids: new Set() }));
    return c;
  };
  const keysOf = (props: ReadonlyArray<readonly [string, string]> | undefined) =>
    new Set((props ?? []).map(([k]) => k));
  for (const r of rows)
    for (const key of keysOf(r.props)) {
      const c = entry(key);
      c.visits += 1;
      c.ids.add(r.visitor_id);
    }
  for (const p of payments)
    for (const key of keysOf(p.visit.props)) {
      const c = entry(key);
      c.payments += 1;
      c.cents += p.cents;
    }
  return new Map(
    [...out].map(([key, { ids, ...c }]) => [key, { ...c, visitors: ids.size }] as [string, PropKeyCounts]),
  );
}
