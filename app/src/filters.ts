import {
  FILTER_DIMENSIONS,
  PROP_DIMENSION_PREFIX,
  type FilterDimension,
  type PropDimension,
} from '../../lambdas/domain/reports/filter-dimensions.js';
import { toSearch } from './range.js';

/**
 * The dashboard's filters (`docs/app.md` "Filters"): conditions a visit must
 * all match, kept in the address as Plausible keeps them, one `f` parameter
 * each, `f=<op>,<name>,<values>` (`?f=is,channel,Search&f=contains,page,/blog`):
 * `op` one of `CHIP_OPERATORS`, `name` the filter dimension of `docs/api.md`
 * "Filters" without its `visit:` / `event:` prefix (`props:<key>` for a
 * custom property, a `,` or `\` of the key written `\,` / `\\`), `values`
 * everything after the second unescaped comma (so a value may hold commas),
 * several values split by `|` (a `|` or `\` of a value written `\|` / `\\`).
 * The report API receives the same conditions as its `filters` JSON. Pure
 * functions of the query string; this module imports no component, so the
 * early requests (`start.ts`) can use it.
 */

/**
 * The operators the app offers (Plausible's dashboard offers the same four):
 * a row click makes `is`, a chip's toggle negates, the filter dialog offers all.
 */
export const CHIP_OPERATORS = ['is', 'is_not', 'contains', 'contains_not'] as const;
export type ChipOperator = (typeof CHIP_OPERATORS)[number];

/** Each operator's words on a chip and in the dialog, and the operator its toggle turns it into. */
export const OPERATOR_TEXT: Readonly<Record<ChipOperator, { words: string; negated: ChipOperator }>> = {
  is: { words: 'is', negated: 'is_not' },
  is_not: { words: 'is not', negated: 'is' },
  contains: { words: 'contains', negated: 'contains_not' },
  contains_not: { words: 'does not contain', negated: 'contains' },
};

/** A filter dimension of a chip: a visit dimension, a page or goal, or a custom property (`event:props:<key>`). */
export type ChipDimension = FilterDimension | PropDimension;

/** One condition on screen and in the address. */
export interface FilterChip {
  op: ChipOperator;
  dimension: ChipDimension;
  /**
   * The values, at least one; a visit matches when its value matches any of them. `''` is "no value" (Direct /
   * none, no campaign), as the API reads it.
   */
  values: string[];
}

/** The address parameter of a filter. */
export const FILTER_PARAM = 'f';

/** At most this many filters are taken from an address: the API's bound on conditions (`FILTER_LIMITS`). */
export const MAX_CHIPS = 20;
/** At most this many values a filter: the API's bound (`FILTER_LIMITS.values`). */
export const MAX_VALUES = 30;

const PROPS_NAME = 'props:';
const shortName = (d: FilterDimension): string => d.slice(d.indexOf(':') + 1);
/** Short name in the address → filter dimension, a `Map` (the address is outside text). */
const BY_SHORT_NAME = new Map<string, FilterDimension>(
  (Object.keys(FILTER_DIMENSIONS) as FilterDimension[]).map((d) => [shortName(d), d]),
);
const OPERATORS = new Set<string>(CHIP_OPERATORS);

/** The custom property key of a chip dimension (`event:props:plan` → `plan`), or null for any other dimension. */
export function propKey(dimension: ChipDimension): string | null {
  return dimension.startsWith(PROP_DIMENSION_PREFIX) ? dimension.slice(PROP_DIMENSION_PREFIX.length) : null;
}

/** The filter dimension of a custom property key. */
export function propDimension(key: string): PropDimension {
  return `${PROP_DIMENSION_PREFIX}${key}`;
}

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

/** `text` with `\` and each of `special` escaped by a backslash. */
const escape = (text: string, special: string): string =>
  text.replaceAll('\\', '\\\\').replaceAll(special, `\\${special}`);

/** Splits `text` at each unescaped `separator`, unescaping (`\x` → `x`); stops after `limit` parts, the last taking the rest raw. */
function splitEscaped(text: string, separator: string, limit = Infinity): string[] {
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (parts.length === limit - 1) return [...parts, text.slice(i)];
    if (c === '\\' && i + 1 < text.length) part += text[++i];
    else if (c === separator) {
      parts.push(part);
      part = '';
    } else part += c;
  }
  return [...parts, part];
}

/** The dimension of an address name (`channel`, `props:plan`), or undefined when it names none. */
function dimensionOfName(name: string): ChipDimension | undefined {
  if (name.startsWith(PROPS_NAME)) {
    const key = name.slice(PROPS_NAME.length);
    return key === '' ? undefined : propDimension(key);
  }
  return BY_SHORT_NAME.get(name);
}

/** The address name of a dimension (`event:props:a,b` → `props:a\,b`). */
function nameOfDimension(dimension: ChipDimension): string {
  const key = propKey(dimension);
  return key === null ? shortName(dimension as FilterDimension) : `${PROPS_NAME}${escape(key, ',')}`;
}

/** One `f` value read, or null when it is not `<op>,<known name>,<values>` with at most `MAX_VALUES` values. */
function chipOfParam(raw: string): FilterChip | null {
  const comma = raw.indexOf(',');
  const op = raw.slice(0, comma);
  if (comma < 0 || !OPERATORS.has(op)) return null;
  // The name ends at the first comma no backslash escapes; the values are the rest.
  const [name, rest] = splitEscaped(raw.slice(comma + 1), ',', 2);
  if (rest === undefined) return null;
  // A prop key's escapes are undone by the split; any other name has none to undo.
  const dimension = dimensionOfName(name!);
  const values = splitEscaped(rest, '|');
  if (dimension === undefined || values.length > MAX_VALUES) return null;
  return { op: op as ChipOperator, dimension, values };
}

/**
 * The filters of a query string (`?…`, or without the `?`), in their order.
 * An `f` that is not `<op>,<known name>,<values>` is counted in `ignored`,
 * not guessed at; a dimension given twice keeps its last condition; beyond
 * `MAX_CHIPS` the rest are ignored.
 */
export function filtersFromSearch(search: string): { chips: FilterChip[]; ignored: number } {
  const chips: FilterChip[] = [];
  let ignored = 0;
  for (const raw of new URLSearchParams(search).getAll(FILTER_PARAM)) {
    const chip = chipOfParam(raw);
    if (chip === null || chips.length >= MAX_CHIPS) {
      ignored++;
      continue;
    }
    const same = chips.findIndex((c) => c.dimension === chip.dimension);
    if (same >= 0) chips.splice(same, 1);
    chips.push(chip);
  }
  return { chips, ignored };
}

/** The `f` values of filters, for the address (`rangeSearch`'s `extra`). */
export function filterParams(chips: readonly FilterChip[]): string[] {
  return chips.map((c) => `${c.op},${nameOfDimension(c.dimension)},${c.values.map((v) => escape(v, '|')).join('|')}`);
}

/**
 * The report API's `filters` parameter (`docs/api.md` "Filters") for the chips, or undefined for none
 * (unfiltered). `contains` and `does not contain` ignore case (`{"case_sensitive": false}`), as Plausible's
 * dashboard's do; `is` and `is not` compare exactly, as a row click means.
 */
export function apiFilters(chips: readonly FilterChip[]): string | undefined {
  if (!chips.length) return undefined;
  return JSON.stringify(
    chips.map((c) =>
      c.op === 'contains' || c.op === 'contains_not'
        ? [c.op, c.dimension, c.values, { case_sensitive: false }]
        : [c.op, c.dimension, c.values],
    ),
  );
}

/** The chips with `chip` added, replacing a condition on the same dimension (Plausible's row click). */
export function withChip(chips: readonly FilterChip[], chip: FilterChip): FilterChip[] {
  return [...chips.filter((c) => c.dimension !== chip.dimension), chip];
}

/**
 * The chips with the one at `index` replaced by `chip` in its place (an edit in the filter dialog), any other
 * condition on `chip`'s dimension dropped; an `index` outside the chips adds it (`withChip`).
 */
export function replacedAt(chips: readonly FilterChip[], index: number, chip: FilterChip): FilterChip[] {
  if (index < 0 || index >= chips.length) return withChip(chips, chip);
  return chips.flatMap((c, i) => (i === index ? [chip] : c.dimension === chip.dimension ? [] : [c]));
}

/** The chips with the one at `index` negated (`is` ↔ `is_not`, `contains` ↔ `contains_not`). */
export function negatedAt(chips: readonly FilterChip[], index: number): FilterChip[] {
  return chips.map((c, i) => (i === index ? { ...c, op: OPERATOR_TEXT[c.op].negated } : c));
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
