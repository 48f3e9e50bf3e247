import { FILTER_DIMENSIONS, type FilterDimension } from '../../lambdas/domain/reports/filter-dimensions.js';
import { toSearch } from './range.js';

/**
 * The dashboard's filters (`docs/app.md` "Filters"): conditions a visit must
 * all match, kept in the address as Plausible keeps them, one `f` parameter
 * each, `f=<op>,<name>,<value>` (`?f=is,channel,Search&f=is_not,country,US`):
 * `op` is `is` or `is_not`, `name` the filter dimension of `docs/api.md`
 * "Filters" without its `visit:` / `event:` prefix, `value` everything after
 * the second comma (so a value may hold commas). The report API receives the
 * same conditions as its `filters` JSON. Pure functions of the query string;
 * this module imports no component, so the early requests (`start.ts`) can use it.
 */

/** The operators a chip offers: a row click makes `is`, the chip's toggle negates it. */
export type ChipOperator = 'is' | 'is_not';

/** One condition on screen and in the address. */
export interface FilterChip {
  op: ChipOperator;
  dimension: FilterDimension;
  /** The visit's value; `''` is "no value" (Direct / none, no campaign), as the API reads it. */
  value: string;
}

/** The address parameter of a filter. */
export const FILTER_PARAM = 'f';

/** At most this many filters are taken from an address: the API's bound on conditions (`FILTER_LIMITS`). */
export const MAX_CHIPS = 20;

const shortName = (d: FilterDimension): string => d.slice(d.indexOf(':') + 1);
/** Short name in the address → filter dimension, a null-prototype table (the address is outside text). */
const BY_SHORT_NAME = new Map<string, FilterDimension>(
  (Object.keys(FILTER_DIMENSIONS) as FilterDimension[]).map((d) => [shortName(d), d]),
);

/**
 * The breakdown dimension of a panel → the filter dimension whose value its rows show, the inverse of
 * `FILTER_DIMENSIONS[...].breakdown`; a breakdown no filter reads is absent.
 */
const FILTER_OF_BREAKDOWN = new Map<string, FilterDimension>(
  (Object.entries(FILTER_DIMENSIONS) as Array<[FilterDimension, { breakdown: string | null }]>)
    .filter(([, spec]) => spec.breakdown !== null)
    .map(([d, spec]) => [spec.breakdown!, d]),
);

/** The filter dimension a breakdown panel's rows filter by (`page` → `event:page`), or null. */
export function filterOfBreakdown(breakdown: string): FilterDimension | null {
  return FILTER_OF_BREAKDOWN.get(breakdown) ?? null;
}

/**
 * The filters of a query string (`?…`, or without the `?`), in their order.
 * An `f` that is not `is|is_not,<known name>,<value>` is counted in
 * `ignored`, not guessed at; a dimension given twice keeps its last
 * condition; beyond `MAX_CHIPS` the rest are ignored.
 */
export function filtersFromSearch(search: string): { chips: FilterChip[]; ignored: number } {
  const chips: FilterChip[] = [];
  let ignored = 0;
  for (const raw of new URLSearchParams(search).getAll(FILTER_PARAM)) {
    const [op, name] = raw.split(',', 2);
    const dimension = name === undefined ? undefined : BY_SHORT_NAME.get(name);
    if ((op !== 'is' && op !== 'is_not') || dimension === undefined || chips.length >= MAX_CHIPS) {
      ignored++;
      continue;
    }
    const chip = { op, dimension, value: raw.slice(op.length + name!.length + 2) } as const;
    const same = chips.findIndex((c) => c.dimension === dimension);
    if (same >= 0) chips.splice(same, 1);
    chips.push(chip);
  }
  return { chips, ignored };
}

/** The `f` values of filters, for the address (`rangeSearch`'s `extra`). */
export function filterParams(chips: readonly FilterChip[]): string[] {
  return chips.map((c) => `${c.op},${shortName(c.dimension)},${c.value}`);
}

/** The report API's `filters` parameter (`docs/api.md` "Filters") for the chips, or undefined for none (unfiltered). */
export function apiFilters(chips: readonly FilterChip[]): string | undefined {
  return chips.length ? JSON.stringify(chips.map((c) => [c.op, c.dimension, [c.value]])) : undefined;
}

/** The chips with `chip` added, replacing a condition on the same dimension (Plausible's row click). */
export function withChip(chips: readonly FilterChip[], chip: FilterChip): FilterChip[] {
  return [...chips.filter((c) => c.dimension !== chip.dimension), chip];
}

/** The chips with the one at `index` negated (`is` ↔ `is_not`). */
export function negatedAt(chips: readonly FilterChip[], index: number): FilterChip[] {
  return chips.map((c, i) => (i === index ? { ...c, op: c.op === 'is' ? 'is_not' : 'is' } : c));
}

/** The chips without the one at `index`. */
export function withoutAt(chips: readonly FilterChip[], index: number): FilterChip[] {
  return chips.filter((_, i) => i !== index);
}

/**
 * The query string `search` with its filters replaced by `chips`, every other
 * parameter kept (range, interval, the payments' list filter) except the
 * payments' `offset`: another filter starts at the first page.
 */
export function searchWithFilters(search: string, chips: readonly FilterChip[]): string {
  const kept = [...new URLSearchParams(search)].filter(([k]) => k !== FILTER_PARAM && k !== 'offset');
  return toSearch([...kept, ...filterParams(chips).map((f) => [FILTER_PARAM, f] as const)]);
}
