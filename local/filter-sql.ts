import { OPERATOR_BASE, fieldOf, type Filter, type FilterCondition } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
import type { DictionaryName } from '../lambdas/domain/visit-table.js';
import { sqlLiteral } from './sql.js';

/**
 * A filter as a DuckDB boolean expression over the visit table's encoded
 * columns (`docs/data-model.md`, "Filtered reports"), meaning exactly what
 * `matches` (`lambdas/domain/reports/filters.ts`) means over a row. Each
 * condition is resolved against the site's dictionary, the relation `dict`
 * (dictionary, value, id), once: the scan then compares ids. A condition on
 * a one-id column (a dimension, landing or exit page) is resolved before the
 * query (`resolutionQuery`) and its ids written into it as constants, so the
 * Parquet reader skips the row groups whose min/max of the column cannot
 * hold them (the table is sorted by channel and device); a condition on a
 * list (pages, goals) passed by a few ids is `list_contains` of each, and
 * otherwise (and for properties) a lookup in the dictionary's booleans.
 * A visit without a value reads as the empty string, so the condition is
 * also tested on `''` for a NULL column. `matches` is DuckDB's `regexp_matches`
 * (RE2, linear time) with the same partial-match meaning as JavaScript's
 * `RegExp.test` on the patterns the filter schema accepts.
 */

/** The condition's positive test on a text expression. */
function textTest(condition: FilterCondition, text: string): string {
  const { base } = OPERATOR_BASE[condition.op];
  const cs = condition.caseSensitive;
  const fold = (sql: string) => (cs ? sql : `lower(${sql})`);
  const tests = condition.values.map((v) => {
    const value = sqlLiteral(v);
    if (base === 'is') return `${fold(text)} = ${fold(value)}`;
    if (base === 'contains') return `contains(${fold(text)}, ${fold(value)})`;
    return `regexp_matches(${text}, ${value}${cs ? '' : `, 'i'`})`;
  });
  return `(${tests.join(' OR ')})`;
}

/**
 * A condition resolved against the dictionary before the query: on a one-id column, the ids whose value
 * passes its positive test, and whether a visit without a value (tested as `''`) passes it; on a list
 * column (pages, goals), at most `FEW_IDS + 1` of the passing ids (enough to say whether they are few).
 */
export interface ResolvedCondition {
  ids: readonly number[];
  empty: boolean;
  /** On the pages column: whether at least half the site's pages pass (`EXIT_FIRST`). */
  most?: boolean;
}

/** The conditions of a filter resolved before the query (`resolutionQuery`), with their resolutions. */
export type ResolvedConditions = ReadonlyMap<FilterCondition, ResolvedCondition>;

/**
 * A list condition passed by at most this many ids is tested by `list_contains` of each: at a tenth of the
 * bench site, `list_contains` of one id costs a quarter of the lookup in the dictionary's booleans over a
 * year of visits (`docs/benchmarks.md`, "Filtered dashboards").
 */
const FEW_IDS = 3;

/**
 * A pages condition that at least this share of the site's pages pass tests the visit's exit page and first page
 * first, and its list only where both fail (`exitFirst`): the exit page is one of the visit's pages (its last,
 * `visitRow`), so the answer is the same, and a lookup of a one-id column is far cheaper than testing the list.
 * A condition whose exit pages rarely pass pays for reading and looking up the exit page in vain, and the share of
 * visits that pass is not known before the scan, so the share of pages stands in for it (measured:
 * `docs/benchmarks.md`, "An unselective year: the exit page first").
 */
const EXIT_FIRST = 0.5;

/** The column and dictionary of a condition resolved before the query (not a property's), and whether it is a list. */
function resolvedColumnOf(
  condition: FilterCondition,
): { column: string; dictionary: DictionaryName; list: boolean } | null {
  const field = fieldOf(condition.dimension);
  if (field.kind === 'prop') return null;
  if (field.kind === 'list')
    return { column: field.name, dictionary: field.name === 'pages' ? 'page' : 'goal', list: true };
  return field.kind === 'dimension'
    ? { column: field.name, dictionary: field.name, list: false }
    : { column: field.kind, dictionary: 'page', list: false };
}

/** The conditions of a filter resolved before the query, in the filter's order. */
function resolvedConditions(filter: Filter): FilterCondition[] {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.filters.flatMap(resolvedConditions);
    case 'not':
      return resolvedConditions(filter.filter);
    case 'condition':
      return resolvedColumnOf(filter) ? [filter] : [];
  }
}

/**
 * The query that resolves a filter's conditions (but properties') against the relation `dict` (dictionary,
 * value, id): one row per condition, `n` its index in `conditions`, `ids` the passing ids (for a list
 * column, the first `FEW_IDS + 1`), `empty` whether `''` passes and `most` whether a pages condition passes at
 * least `EXIT_FIRST` of the site's pages; or null when the filter has none.
 */
export function resolutionQuery(filter: Filter): { conditions: FilterCondition[]; sql: string } | null {
  const conditions = resolvedConditions(filter);
  if (conditions.length === 0) return null;
  const parts = conditions.map((condition, n) => {
    const { dictionary, list } = resolvedColumnOf(condition) ?? { dictionary: 'page', list: false };
    const entries = `FROM dict WHERE dictionary = ${sqlLiteral(dictionary)}`;
    const passing = `SELECT id ${entries} AND ${textTest(condition, 'value')}`;
    const most =
      dictionary === 'page' && list
        ? `(SELECT count(*) FROM (${passing})) >= ${EXIT_FIRST} * (SELECT count(*) ${entries})`
        : 'false';
    return (
      `SELECT ${n} AS n, (SELECT coalesce(list(id ORDER BY id), []::UINTEGER[]) FROM ` +
      `(${passing}${list ? ` ORDER BY id LIMIT ${FEW_IDS + 1}` : ''})) AS ids, ${textTest(condition, "''")} AS empty, ` +
      `${most} AS most`
    );
  });
  return { conditions, sql: parts.join(' UNION ALL ') };
}

/**
 * A one-id column's positive test with its ids as constants, never NULL: a plain comparison (with the ids'
 * bounds, which the Parquet reader tests against each row group's min/max to skip it, `docs/data-model.md`),
 * or with `IS NULL` when a visit without a value passes.
 */
function idTest(column: string, { ids, empty }: ResolvedCondition): string {
  const sorted = [...ids].sort((a, b) => a - b);
  const lo = sorted[0];
  const hi = sorted[sorted.length - 1];
  const some =
    lo === undefined || hi === undefined
      ? 'false'
      : lo === hi
        ? `${column} = ${lo}`
        : `(${column} BETWEEN ${lo} AND ${hi} AND ${column} IN (${sorted.join(', ')}))`;
  return empty ? `(${column} IS NULL OR ${some})` : `(${column} IS NOT NULL AND ${some})`;
}

/** A list column's positive test passed by few ids (`FEW_IDS`), never NULL: whether the list holds any of them. */
const fewIdsTest = (column: string, ids: readonly number[]) =>
  ids.length === 0
    ? 'false'
    : `coalesce(${ids.map((id) => `list_contains(${column}, ${id}::UINTEGER)`).join(' OR ')}, false)`;

/** A `prop` dictionary entry's key (`i` 0) or value (1) (`propPair`: `["key","value"]`). */
const propPart = (i: number) =>
  // The CASE keeps the JSON functions off other dictionaries' text, whatever order DuckDB tests the conditions in.
  `CASE WHEN dictionary = 'prop' THEN json_extract_string(value, '$[${i}]') END`;

/** The `prop` dictionary's ids of a key's pairs whose value passes `valueTest`, as a list. */
const propIds = (key: string, valueTest: (value: string) => string) =>
  `(SELECT coalesce(list(id), []::UINTEGER[]) FROM dict WHERE dictionary = 'prop' AND ${propPart(0)} = ${sqlLiteral(key)} AND ${valueTest(propPart(1))})`;

/**
 * Whether any id of a list column (`pages`, `goals`, `props`) has an entry of `dictionary` passing `test`
 * (false for an empty list). The test is evaluated once per entry, into a list of booleans indexed by id
 * (ids are 1, 2, … in each dictionary: `encodeRows`), and each visit's ids are looked up in it: over the
 * hundreds of ids a `contains` resolves to, much cheaper than `list_has_any` of the two lists
 * (`docs/benchmarks.md`, "Filtered dashboards").
 */
const anyOf = (column: string, dictionary: DictionaryName, test: string) =>
  `coalesce(list_bool_or(list_select(${booleans(dictionary, test)}, ${column})), false)`;

/** The list of `test` on each entry of `dictionary`, indexed by id (`anyOf`). */
const booleans = (dictionary: DictionaryName, test: string) =>
  `(SELECT list(coalesce(${test}, false) ORDER BY id) FROM dict WHERE dictionary = ${sqlLiteral(dictionary)})`;

/**
 * `anyOf` on the pages, tested by one-id lookups first (`EXIT_FIRST`): a visit whose exit page passes passes; one
 * whose exit page fails and that has one page (its exit page: the list holds each page once) fails; one whose
 * first page passes passes; only the others' lists are tested. A CASE, not an OR: DuckDB evaluates each arm on
 * the rows the arms before it left, also under a NOT (`contains_not`), where it evaluates both sides of an OR on
 * every row (measured: `docs/benchmarks.md`, "An unselective year: the exit page first").
 */
const exitFirst = (test: string) => {
  const passes = (id: string) => `coalesce(list_extract(${booleans('page', test)}, ${id}), false)`;
  return (
    `CASE WHEN ${passes('exit_page')} THEN true WHEN len(pages) < 2 THEN false ` +
    `WHEN ${passes('pages[1]')} THEN true ELSE ${anyOf('pages', 'page', test)} END`
  );
};

function conditionSql(condition: FilterCondition, resolved: ResolvedConditions): string {
  const field = fieldOf(condition.dimension);
  let positive: string;
  if (field.kind === 'prop') {
    // Any of the visit's values of the key passes; a visit without the key has the empty string.
    const key = `${propPart(0)} = ${sqlLiteral(field.key)}`;
    positive =
      `CASE WHEN ${anyOf('props', 'prop', key)} ` +
      `THEN ${anyOf('props', 'prop', `${key} AND ${textTest(condition, propPart(1))}`)} ELSE ${textTest(condition, "''")} END`;
  } else {
    const resolution = resolved.get(condition);
    if (!resolution) throw new Error(`filter condition on ${condition.dimension} was not resolved`);
    if (field.kind !== 'list') positive = idTest(field.kind === 'dimension' ? field.name : field.kind, resolution);
    else if (resolution.ids.length <= FEW_IDS) positive = fewIdsTest(field.name, resolution.ids);
    else if (field.name === 'pages' && resolution.most === true) positive = exitFirst(textTest(condition, 'value'));
    else positive = anyOf(field.name, field.name === 'pages' ? 'page' : 'goal', textTest(condition, 'value'));
  }
  return OPERATOR_BASE[condition.op].negated ? `(NOT ${positive})` : `(${positive})`;
}

/**
 * Whether the filter tests a list column of the visit (`event:page`, `event:goal`, `event:props:<key>`):
 * each request that scans alone then decodes that list and tests it on every visit of its range, which a
 * load's panels are worth sharing one evaluation of (`SharedScans`); a filter on one-id columns only reads
 * those columns beside each panel's own and skips row groups by the table's sort, so copying its matches
 * costs about what it saves (measured: `docs/benchmarks.md`, "One evaluation per load").
 */
export function testsList(filter: Filter): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.filters.some(testsList);
    case 'not':
      return testsList(filter.filter);
    case 'condition': {
      const { kind } = fieldOf(filter.dimension);
      return kind === 'list' || kind === 'prop';
    }
  }
}

/**
 * The filter as a SQL boolean expression (never NULL) over the visit table's columns and the `dict` relation,
 * its conditions on one-id columns given by `resolved` (`resolutionQuery`).
 * @throws Error when a condition on a one-id column is not in `resolved`
 */
export function filterSql(filter: Filter, resolved: ResolvedConditions): string {
  switch (filter.kind) {
    // An empty `and` is true and an empty `or` false, as `every` and `some` of `matches`.
    case 'and':
      return filter.filters.length === 0
        ? 'true'
        : `(${filter.filters.map((f) => filterSql(f, resolved)).join(' AND ')})`;
    case 'or':
      return filter.filters.length === 0
        ? 'false'
        : `(${filter.filters.map((f) => filterSql(f, resolved)).join(' OR ')})`;
    case 'not':
      return `(NOT ${filterSql(filter.filter, resolved)})`;
    case 'condition':
      return conditionSql(filter, resolved);
  }
}

/**
 * A list column's ids, each once, in first-occurrence order: the elements found first at their own position.
 * Over a year of the bench site's visits this costs about half of `list_distinct`, which builds a hash table
 * per row (`docs/benchmarks.md`, "Filtered dashboards at full scale").
 */
export const distinctIds = (column: string) => `list_filter(${column}, (x, i) -> list_position(${column}, x) = i)`;

/** Each breakdown dimension as an id expression over the visit table and the dictionary that names its ids (`page`: one row per distinct page). */
export const BREAKDOWN_COLUMNS: Readonly<Record<Dimension, { id: string; dictionary: DictionaryName }>> = {
  channel: { id: 'channel', dictionary: 'channel' },
  referrer: { id: 'referrer_host', dictionary: 'referrer_host' },
  campaign: { id: 'utm_campaign', dictionary: 'utm_campaign' },
  keyword: { id: 'utm_term', dictionary: 'utm_term' },
  landing_page: { id: 'landing_page', dictionary: 'page' },
  // Each visit's pages are stored once each (`encodeRows`; older files read so, `FileForms`).
  page: { id: 'unnest(pages)', dictionary: 'page' },
  country: { id: 'country', dictionary: 'country' },
  device: { id: 'device', dictionary: 'device' },
  browser: { id: 'browser', dictionary: 'browser' },
  os: { id: 'os', dictionary: 'os' },
  language: { id: 'language', dictionary: 'language' },
  utm_source: { id: 'utm_source', dictionary: 'utm_source' },
  utm_medium: { id: 'utm_medium', dictionary: 'utm_medium' },
  utm_content: { id: 'utm_content', dictionary: 'utm_content' },
  exit_page: { id: 'exit_page', dictionary: 'page' },
};

/**
 * A custom property's breakdown column (`docs/api.md`, `breakdown/prop:<key>`): each of a visit's `prop` ids
 * of the key (one row per value it had), or one NULL id (NONE) for a visit that never had the key; and
 * the value of a `prop` dictionary entry's text.
 */
export function propBreakdownColumn(key: string): { id: string; value: (entry: string) => string } {
  const ids = `list_intersect(coalesce(props, []::UINTEGER[]), ${propIds(key, () => 'true')})`;
  return {
    id: `unnest(CASE WHEN len(${ids}) = 0 THEN [NULL::UINTEGER] ELSE ${ids} END)`,
    value: (entry) => `json_extract_string(${entry}, '$[1]')`,
  };
}
