import * as z from 'zod';
import type { VisitRow } from '../visit-table.js';
import { PROPS_LIMITS } from '../props.js';
import {
  FILTER_DIMENSIONS,
  PROP_DIMENSION_PREFIX,
  type FilterDimension,
  type PropDimension,
  type RowField,
} from './filter-dimensions.js';

export { FILTER_DIMENSIONS, PROP_DIMENSION_PREFIX, type FilterDimension, type PropDimension };

/**
 * The `filters` parameter of the reports (`docs/api.md`, "Filters"), in the
 * shape of Plausible's Stats API v2: a JSON array of filters, all of which a
 * visit must match. A filter is a condition `[operator, dimension, [values]]`
 * (optionally a fourth element `{"case_sensitive": false}`), or
 * `["and", [filters]]`, `["or", [filters]]`, `["not", filter]`.
 *
 * A filter selects visits: a visit dimension is compared with the visit's
 * value (a visit without a value has the empty string, as Plausible's
 * `["is_not", "visit:country", [""]]` reads), and `event:page` / `event:goal`
 * match a visit when any of its page views / goals matches. Each negated
 * operator is the negation of its positive one over the visit, so
 * `["is_not", "event:page", ["/blog"]]` is a visit that never viewed `/blog`.
 * `event:props:<key>` (a custom property, `docs/tracking.md`) matches a
 * visit when any of its events had the property with a matching value; a
 * visit none of whose events had it has the empty string, as a visit
 * dimension without a value.
 */

/** Operators (Plausible Stats API v2). The `_not` forms are the negation of their positive form. */
export const FILTER_OPERATORS = ['is', 'is_not', 'contains', 'contains_not', 'matches', 'matches_not'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const DIMENSION_NAMES = Object.keys(FILTER_DIMENSIONS) as [FilterDimension, ...FilterDimension[]];

/** The property key of a `event:props:<key>` dimension (1 to 300 UTF-8 bytes), or null for any other dimension. */
export function propKeyOf(dimension: string): string | null {
  if (!dimension.startsWith(PROP_DIMENSION_PREFIX)) return null;
  const key = dimension.slice(PROP_DIMENSION_PREFIX.length);
  return key.length > 0 && Buffer.byteLength(key, 'utf8') <= PROPS_LIMITS.keyBytes ? key : null;
}

/**
 * Bounds of a `filters` value (ours: Plausible states none). They keep a
 * request's work and the SQL it becomes small whatever is sent.
 */
export const FILTER_LIMITS = {
  /** Characters of the parameter's JSON text. */
  json: 8_192,
  /** Conditions in the whole expression. */
  conditions: 20,
  /** Nesting of `and`, `or`, `not`. */
  depth: 5,
  /** Values of one condition. */
  values: 30,
  /** Characters of one value (a page path is kept up to 2,048, a dimension up to 256). */
  value: 2_048,
  /** Characters of one `matches` pattern. */
  pattern: 256,
} as const;

/** One condition, parsed. `path` names it in the request (`filters[1][2]`), for error messages. */
export interface FilterCondition {
  kind: 'condition';
  op: FilterOperator;
  dimension: FilterDimension | PropDimension;
  values: string[];
  /** Plausible's `case_sensitive` modifier; true unless `{"case_sensitive": false}` is given. */
  caseSensitive: boolean;
}
export type Filter = FilterCondition | { kind: 'and' | 'or'; filters: Filter[] } | { kind: 'not'; filter: Filter };

/** The filter every visit matches (an `and` of none): a report over all the visit table's visits. */
export const EVERY_VISIT: Filter = { kind: 'and', filters: [] };

/**
 * `matches` patterns: a subset of regular expressions that means the same in
 * RE2 (DuckDB's `regexp_matches`, which runs the API's queries in linear
 * time) and in JavaScript (the reference predicate, the app), and cannot
 * backtrack catastrophically in JavaScript: no backreference, no lookaround,
 * no inline flag or named group (`(?` other than `(?:`), no quantifier on a
 * group (`(a+)+`, `(a|aa)*`), no quantifier right after another quantified
 * atom (`a*a*`), and at most four quantifiers. Partial match, as Plausible's
 * (`^` and `$` anchor).
 */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > FILTER_LIMITS.pattern) return `a pattern has at most ${FILTER_LIMITS.pattern} characters`;
  let quantifiers = 0;
  let previousQuantified = false;
  let i = 0;
  const quantifierAt = (j: number): number => {
    const c = pattern[j];
    if (c === '*' || c === '+' || c === '?') return 1;
    if (c === '{') {
      const m = /^\{\d{1,3}(,\d{0,3})?\}/.exec(pattern.slice(j));
      if (m) return m[0].length;
    }
    return 0;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    let atomEnd: number;
    let group = false;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) return 'a pattern cannot end with \\';
      if (/[1-9kpPbBQE]/.test(next))
        return `\\${next} is not supported (backreferences, classes and \\b differ between engines)`;
      atomEnd = i + 2;
    } else if (c === '[') {
      const close = /^\[\^?\]?(?:\\.|[^\]\\])*\]/.exec(pattern.slice(i));
      if (!close) return 'an unclosed [';
      if (close[0].includes('[:')) return 'POSIX classes ([:alpha:]) are not supported';
      atomEnd = i + close[0].length;
    } else if (c === '(') {
      if (pattern[i + 1] === '?' && pattern[i + 2] !== ':')
        return 'lookaround, named groups and inline flags are not supported (only (?: ) groups)';
      // A group is an atom that may not be quantified; its inside is checked as we go on.
      group = true;
      atomEnd = pattern[i + 1] === '?' ? i + 3 : i + 1;
    } else if (c === ')' || c === '|' || c === '^' || c === '$') {
      if (c === ')' && quantifierAt(i + 1) > 0) return 'a group cannot be quantified';
      previousQuantified = false;
      i += 1;
      continue;
    } else if (quantifierAt(i) > 0) {
      return 'a quantifier must follow a character, a class or .';
    } else {
      atomEnd = i + 1;
    }
    i = atomEnd;
    const q = group ? 0 : quantifierAt(i);
    if (q > 0) {
      if (previousQuantified) return 'two quantified atoms in a row (a*a*) can backtrack without end';
      quantifiers += 1;
      if (quantifiers > 4) return 'a pattern has at most 4 quantifiers';
      i += q;
      if (pattern[i] === '?' || pattern[i] === '+') i += 1; // lazy or possessive marker
      if (quantifierAt(i) > 0) return 'a quantifier cannot follow a quantifier';
      previousQuantified = true;
    } else previousQuantified = false;
  }
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `not a regular expression (${(error as Error).message})`;
  }
  return null;
}

const modifiersSchema = z.strictObject({ case_sensitive: z.boolean().optional() });

/** Where a value sits in the request, `filters[0][2][1]`. */
const pathName = (path: ReadonlyArray<number | string>) =>
  `filters${path.map((p) => `[${JSON.stringify(p)}]`).join('')}`;

class FilterProblem extends Error {
  constructor(
    readonly path: ReadonlyArray<number | string>,
    message: string,
  ) {
    super(`${pathName(path)}: ${message}`);
  }
}

function parseCondition(raw: unknown[], path: number[]): FilterCondition {
  const [op, dimension, values, modifiers] = raw;
  if (raw.length < 3 || raw.length > 4)
    throw new FilterProblem(
      path,
      'a condition is [operator, dimension, [values]] with an optional {"case_sensitive": false}',
    );
  if (!FILTER_OPERATORS.includes(op as FilterOperator))
    throw new FilterProblem(
      [...path, 0],
      `unknown operator ${JSON.stringify(op)}: one of ${FILTER_OPERATORS.join(', ')}, and, or, not`,
    );
  if (typeof dimension !== 'string' || (!Object.hasOwn(FILTER_DIMENSIONS, dimension) && propKeyOf(dimension) === null))
    throw new FilterProblem(
      [...path, 1],
      `unknown dimension ${JSON.stringify(dimension)}: one of ${DIMENSION_NAMES.join(', ')}, or event:props:<key> (a key of 1 to ${PROPS_LIMITS.keyBytes} bytes)`,
    );
  if (!Array.isArray(values) || values.length === 0 || values.length > FILTER_LIMITS.values)
    throw new FilterProblem([...path, 2], `values are a list of 1 to ${FILTER_LIMITS.values} strings`);
  values.forEach((v, i) => {
    if (typeof v !== 'string') throw new FilterProblem([...path, 2, i], 'a value is a string');
    if (v.length > FILTER_LIMITS.value)
      throw new FilterProblem([...path, 2, i], `a value has at most ${FILTER_LIMITS.value} characters`);
    if (op === 'matches' || op === 'matches_not') {
      const problem = patternProblem(v);
      if (problem) throw new FilterProblem([...path, 2, i], problem);
    }
  });
  let caseSensitive = true;
  if (raw.length === 4) {
    const parsed = modifiersSchema.safeParse(modifiers);
    if (!parsed.success) throw new FilterProblem([...path, 3], 'modifiers are {"case_sensitive": true|false}');
    caseSensitive = parsed.data.case_sensitive ?? true;
  }
  return {
    kind: 'condition',
    op: op as FilterOperator,
    dimension: dimension as FilterDimension | PropDimension,
    values,
    caseSensitive,
  };
}

/** Parses one filter of the JSON, counting its conditions in `seen` against the bounds. */
function parseFilter(raw: unknown, path: number[], depth: number, seen: { conditions: number }): Filter {
  if (!Array.isArray(raw) || raw.length === 0)
    throw new FilterProblem(
      path,
      'a filter is [operator, dimension, [values]], ["and"|"or", [filters]] or ["not", filter]',
    );
  const head: unknown = raw[0];
  if (head === 'and' || head === 'or' || head === 'not') {
    if (depth >= FILTER_LIMITS.depth)
      throw new FilterProblem(path, `and, or and not nest at most ${FILTER_LIMITS.depth} deep`);
    if (raw.length !== 2) throw new FilterProblem(path, `${head} takes one argument`);
    if (head === 'not') return { kind: 'not', filter: parseFilter(raw[1], [...path, 1], depth + 1, seen) };
    const list: unknown = raw[1];
    if (!Array.isArray(list) || list.length === 0)
      throw new FilterProblem([...path, 1], `${head} takes a non-empty list of filters`);
    return { kind: head, filters: list.map((f, i) => parseFilter(f, [...path, 1, i], depth + 1, seen)) };
  }
  seen.conditions += 1;
  if (seen.conditions > FILTER_LIMITS.conditions)
    throw new FilterProblem(path, `at most ${FILTER_LIMITS.conditions} conditions in all`);
  return parseCondition(raw, path);
}

/**
 * Parses the `filters` JSON text into one filter (the AND of the list), or
 * null for an empty list.
 * @throws FilterProblem whose message starts with the failing element's path (`filters[0][1]: unknown dimension ...`)
 */
function parseFilters(text: string): Filter | null {
  if (text.length > FILTER_LIMITS.json) throw new FilterProblem([], `at most ${FILTER_LIMITS.json} characters`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FilterProblem([], 'not JSON: send a JSON array such as [["is","visit:channel",["Search"]]]');
  }
  if (!Array.isArray(json)) throw new FilterProblem([], 'a JSON array of filters');
  const seen = { conditions: 0 };
  const filters = json.map((f, i) => parseFilter(f, [i], 0, seen));
  if (filters.length === 0) return null;
  return filters.length === 1 ? filters[0]! : { kind: 'and', filters };
}

/**
 * The `filters` query parameter: JSON text → the parsed filter (null for
 * `[]`). A failure is one issue whose message names the filter's path, so the
 * report handler answers `400 {"error": "filters: filters[0][1]: unknown dimension ..."}`.
 */
export const filtersParam = z
  .string()
  .transform((text, ctx): Filter | null => {
    try {
      return parseFilters(text);
    } catch (error) {
      if (!(error instanceof FilterProblem)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
      return z.NEVER;
    }
  })
  .describe(
    'Plausible Stats API v2 style filters, as JSON: a list of conditions, all of which a visit must match, each ' +
      '[operator, dimension, [values]] with operator is, is_not, contains, contains_not, matches or matches_not, ' +
      `dimension one of ${DIMENSION_NAMES.join(', ')} or event:props:<key> (a custom property), and an optional {"case_sensitive": false}; or ["and", [...]], ["or", [...]], ["not", filter]. ` +
      'With filters the report counts only matching visits and the revenue credited to them (docs/api.md "Filters")',
  );

/**
 * `filters` as an MCP tool's argument (`docs/mcp.md`, "Tools"): the report API's JSON text
 * (`filtersParam`), or the same array as JSON itself, which is how a model most often writes it;
 * either is parsed and checked by `filtersParam`, with its errors.
 */
export const toolFiltersArg = z
  .union([z.string(), z.array(z.unknown())])
  .transform((given) => (typeof given === 'string' ? given : JSON.stringify(given)))
  .pipe(filtersParam)
  .optional();

const fold = (s: string, caseSensitive: boolean) => (caseSensitive ? s : s.toLowerCase());

/** The values of a row a condition compares: one (the empty string for none) or a list. */
function rowValues(field: RowField, row: VisitRow): readonly string[] {
  switch (field.kind) {
    case 'dimension':
      return [row.dimensions[field.name] ?? ''];
    case 'landing_page':
      return [row.landing_page];
    case 'exit_page':
      return [row.exit_page ?? ''];
    case 'list':
      return row[field.name];
    case 'prop': {
      const values = (row.props ?? []).filter(([k]) => k === field.key).map(([, v]) => v);
      return values.length > 0 ? values : [''];
    }
  }
}

/** Whether one value satisfies a positive operator against one filter value (both already folded). */
const TESTS: Record<'is' | 'contains' | 'matches', (value: string, wanted: string, caseSensitive: boolean) => boolean> =
  {
    is: (value, wanted) => value === wanted,
    contains: (value, wanted) => value.includes(wanted),
    matches: (value, pattern, caseSensitive) => new RegExp(pattern, caseSensitive ? 'u' : 'iu').test(value),
  };

/** The positive operator of each, and whether it is negated. */
export const OPERATOR_BASE: Record<FilterOperator, { base: keyof typeof TESTS; negated: boolean }> = {
  is: { base: 'is', negated: false },
  is_not: { base: 'is', negated: true },
  contains: { base: 'contains', negated: false },
  contains_not: { base: 'contains', negated: true },
  matches: { base: 'matches', negated: false },
  matches_not: { base: 'matches', negated: true },
};

/**
 * Whether a visit matches a filter (`docs/api.md`, "Filters"): the reference
 * rule that the SQL engine's answers are tested against. Case-insensitive
 * comparison lowercases both sides (`String.prototype.toLowerCase`);
 * `matches` with `case_sensitive: false` uses the `i` flag.
 */
export function matches(filter: Filter, row: VisitRow): boolean {
  switch (filter.kind) {
    case 'and':
      return filter.filters.every((f) => matches(f, row));
    case 'or':
      return filter.filters.some((f) => matches(f, row));
    case 'not':
      return !matches(filter.filter, row);
    case 'condition': {
      const { base, negated } = OPERATOR_BASE[filter.op];
      const cs = filter.caseSensitive;
      const wanted = base === 'matches' ? filter.values : filter.values.map((v) => fold(v, cs));
      const values = rowValues(fieldOf(filter.dimension), row);
      const hit = values.some((v) => {
        const value = base === 'matches' ? v : fold(v, cs);
        return wanted.some((w) => TESTS[base](value, w, cs));
      });
      return hit !== negated;
    }
  }
}

/** The row field a filter dimension reads (the predicate and the SQL engine). */
export function fieldOf(dimension: FilterDimension | PropDimension): RowField {
  const key = propKeyOf(dimension);
  return key === null ? FILTER_DIMENSIONS[dimension as FilterDimension].field : { kind: 'prop', key };
}
