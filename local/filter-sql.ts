import { OPERATOR_BASE, fieldOf, type Filter, type FilterCondition } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
import type { DictionaryName } from '../lambdas/domain/visit-table.js';
import { sqlLiteral } from './sql.js';

/**
 * A filter as a DuckDB boolean expression over the visit table's encoded
 * columns (`docs/data-model.md`, "Filtered reports"), meaning exactly what
 * `matches` (`lambdas/domain/reports/filters.ts`) means over a row. Each
 * condition is resolved against the site's dictionary, the relation `dict`
 * (dictionary, value, id), once: the scan then compares ids. A visit
 * without a value reads as the empty string, so the condition is also
 * tested on `''` for a NULL column. `matches` is DuckDB's `regexp_matches`
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

/** The dictionary ids whose value passes the condition's positive test, as a subquery. */
const idsOf = (dictionary: string, condition: FilterCondition) =>
  `(SELECT id FROM dict WHERE dictionary = ${sqlLiteral(dictionary)} AND ${textTest(condition, 'value')})`;

/** The `prop` dictionary's ids of a key's pairs (`propPair`: `["key","value"]`) whose value passes `valueTest`, as a list. */
const propIds = (key: string, valueTest: (value: string) => string) => {
  // The CASE keeps the JSON functions off other dictionaries' text, whatever order DuckDB tests the conditions in.
  const part = (i: number) => `CASE WHEN dictionary = 'prop' THEN json_extract_string(value, '$[${i}]') END`;
  return `(SELECT coalesce(list(id), []::UINTEGER[]) FROM dict WHERE dictionary = 'prop' AND ${part(0)} = ${sqlLiteral(key)} AND ${valueTest(part(1))})`;
};

function conditionSql(condition: FilterCondition): string {
  const field = fieldOf(condition.dimension);
  let positive: string;
  if (field.kind === 'prop') {
    // Any of the visit's values of the key passes; a visit without the key has the empty string.
    const has = (ids: string) => `coalesce(list_has_any(props, ${ids}), false)`;
    positive =
      `CASE WHEN ${has(propIds(field.key, () => 'true'))} ` +
      `THEN ${has(propIds(field.key, (value) => textTest(condition, value)))} ELSE ${textTest(condition, "''")} END`;
  } else if (field.kind === 'list') {
    const dictionary = field.name === 'pages' ? 'page' : 'goal';
    // `list_has_any` of the visit's ids and the matching ids: an empty list (no goal) has none.
    const ids = `(SELECT coalesce(list(id), []::UINTEGER[]) FROM dict WHERE dictionary = ${sqlLiteral(dictionary)} AND ${textTest(condition, 'value')})`;
    positive = `coalesce(list_has_any(${field.name}, ${ids}), false)`;
  } else {
    const [column, dictionary] = field.kind === 'dimension' ? [field.name, field.name] : [field.kind, 'page'];
    positive = `CASE WHEN ${column} IS NULL THEN ${textTest(condition, "''")} ELSE ${column} IN ${idsOf(dictionary, condition)} END`;
  }
  return OPERATOR_BASE[condition.op].negated ? `(NOT ${positive})` : `(${positive})`;
}

/** The filter as a SQL boolean expression (never NULL) over the visit table's columns and the `dict` relation. */
export function filterSql(filter: Filter): string {
  switch (filter.kind) {
    // An empty `and` is true and an empty `or` false, as `every` and `some` of `matches`.
    case 'and':
      return filter.filters.length === 0 ? 'true' : `(${filter.filters.map(filterSql).join(' AND ')})`;
    case 'or':
      return filter.filters.length === 0 ? 'false' : `(${filter.filters.map(filterSql).join(' OR ')})`;
    case 'not':
      return `(NOT ${filterSql(filter.filter)})`;
    case 'condition':
      return conditionSql(filter);
  }
}

/** Each breakdown dimension as an id expression over the visit table and the dictionary that names its ids (`page`: one row per distinct page). */
export const BREAKDOWN_COLUMNS: Readonly<Record<Dimension, { id: string; dictionary: DictionaryName }>> = {
  channel: { id: 'channel', dictionary: 'channel' },
  referrer: { id: 'referrer_host', dictionary: 'referrer_host' },
  campaign: { id: 'utm_campaign', dictionary: 'utm_campaign' },
  keyword: { id: 'utm_term', dictionary: 'utm_term' },
  landing_page: { id: 'landing_page', dictionary: 'page' },
  page: { id: 'unnest(list_distinct(pages))', dictionary: 'page' },
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
