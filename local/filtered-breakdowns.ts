import type { FilteredRange, FilteredValue } from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
import type { DictionaryName } from '../lambdas/domain/visit-table.js';
import type { PropKeyCounts } from '../lambdas/domain/reports/prop-keys.js';
import { BREAKDOWN_COLUMNS, propBreakdownColumn } from './filter-sql.js';
import { sqlLiteral } from './sql.js';
import { SHARED_BREAKDOWNS, countsOf, type FilteredRelations } from './filtered-relations.js';

/**
 * The local filtered engine's breakdowns: the matching visits and their credited payments per value of
 * a dimension or of a custom property, and per custom property key.
 */
export class FilteredBreakdowns {
  constructor(private readonly tables: FilteredRelations) {}

  async breakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    dimension: Dimension,
  ): Promise<Map<string, FilteredValue>> {
    const { id, dictionary } = BREAKDOWN_COLUMNS[dimension];
    return this.valueBreakdown(site, filter, range, id, dictionary, null, SHARED_BREAKDOWNS.has(dimension));
  }

  async propBreakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    key: string,
  ): Promise<Map<string, FilteredValue>> {
    // The shared tables do not hold `props`: the Properties panel is asked after the load's first panels.
    const { id, value } = propBreakdownColumn(key);
    return this.valueBreakdown(site, filter, range, id, 'prop', value, false);
  }

  async propKeys(site: string, filter: Filter, range: FilteredRange): Promise<Map<string, PropKeyCounts>> {
    const { sql: relations } = await this.tables.relations(site, filter, range);
    const db = await this.tables.connect();
    // Each visit (and each payment) once per key, whatever its number of values of the key.
    const keyed = (from: string, columns: string) =>
      `(SELECT DISTINCT ${columns}, json_extract_string(d.value, '$[0]') AS prop_key ` +
      `FROM (SELECT ${columns}, unnest(props) AS id FROM ${from} WHERE len(props) > 0) x ` +
      `JOIN dict d ON d.dictionary = 'prop' AND d.id = x.id)`;
    const reader = await db.runAndReadAll(
      `${relations} SELECT coalesce(a.prop_key, b.prop_key) AS prop_key, coalesce(a.visits, 0) AS visits, ` +
        `coalesce(a.visitors, 0) AS visitors, coalesce(b.payments, 0) AS payments, coalesce(b.cents, 0) AS cents ` +
        `FROM (SELECT prop_key, count(*) AS visits, count(DISTINCT visitor_key) AS visitors ` +
        `FROM ${keyed('v', 'visit_key, visitor_key')} GROUP BY 1) a FULL JOIN ` +
        `(SELECT prop_key, count(*) AS payments, sum(cents) AS cents FROM ${keyed('p', 'key, cents')} GROUP BY 1) b ` +
        `USING (prop_key)`,
    );
    return new Map(
      reader
        .getRowObjectsJS()
        .map((r) => [String(r.prop_key), countsOf(r, ['visitors', 'visits', 'payments', 'cents'])]),
    );
  }

  /**
   * Visits and credited payments per value: `id`, an id expression over a visit (one row each, or unnested),
   * named through `dictionary`, whose entry's text `valueOf` turns into the value; from the load's shared
   * tables when `shareable` (`id` reads only their columns). A dimension's rows (`valueOf` the entry's text
   * itself) are counted per id and named after (`visitsById`, `paymentsById`), a property's named first.
   */
  private async valueBreakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    id: string,
    dictionary: DictionaryName,
    valueOf: ((entry: string) => string) | null,
    shareable: boolean,
  ): Promise<Map<string, FilteredValue>> {
    const payments = 'count(*) AS payments, sum(x.cents) AS cents, count(DISTINCT x.customer) AS customers';
    const [visitsPer, paymentsPer] =
      valueOf === null
        ? [visitsById(id, dictionary), paymentsById(id, dictionary, payments)]
        : [byName(id, dictionary, valueOf)('v', 'count(*) AS visits'), byName(id, dictionary, valueOf)('p', payments)];
    const rows = await this.tables.overShared(
      site,
      filter,
      range,
      `SELECT coalesce(a.value, b.value) AS value, coalesce(a.visits, 0) AS visits, ` +
        `coalesce(b.payments, 0) AS payments, coalesce(b.cents, 0) AS cents, coalesce(b.customers, 0) AS customers ` +
        `FROM ${visitsPer} a FULL JOIN ${paymentsPer} b USING (value)`,
      { shareable },
    );
    return new Map(
      rows.map((r) => [
        String(r.value),
        {
          visits: Number(r.visits),
          payments: Number(r.payments),
          cents: Number(r.cents),
          customers: Number(r.customers),
        },
      ]),
    );
  }
}

/**
 * Per value of a relation's rows (`from`, `select` its aggregates over `x`), each row named first: its id
 * (`id`) joined to its `dictionary` entry, whose text `valueOf` turns into the value, then grouped by that
 * value. A NULL id is a visit without a value: NONE (''), as the rollups key it.
 */
const byName =
  (id: string, dictionary: DictionaryName, valueOf: (entry: string) => string) => (from: string, select: string) =>
    `(SELECT coalesce(${valueOf('d.value')}, '') AS value, ${select} FROM (SELECT ${id} AS id, * FROM ${from}) x ` +
    `LEFT JOIN dict d ON d.dictionary = ${sqlLiteral(dictionary)} AND d.id = x.id GROUP BY 1)`;

/** A dimension's entries (id, value) in the relation `dict`. */
const entriesOf = (dictionary: DictionaryName) =>
  `(SELECT id, value FROM dict WHERE dictionary = ${sqlLiteral(dictionary)})`;

/**
 * The matching visits (`v`) per value of a dimension, counted under their id first and the few groups named
 * after: grouping millions of rows by an integer and joining hundreds, not joining millions and grouping them
 * by text (`docs/benchmarks.md`, "An unselective year"). A visit without a value (a NULL id) is NONE (''),
 * merged with the entry `''` where the dictionary has one (counts add up).
 */
const visitsById = (id: string, dictionary: DictionaryName) =>
  `(SELECT coalesce(d.value, '') AS value, sum(c.visits) AS visits FROM ` +
  `(SELECT id, count(*) AS visits FROM (SELECT ${id} AS id FROM v) GROUP BY id) c ` +
  `LEFT JOIN ${entriesOf(dictionary)} d ON d.id = c.id GROUP BY 1)`;

/**
 * The credited payments (`p`) per value of a dimension (`select` their aggregates over `x`), likewise counted
 * under their id first; a payment whose visit has no value is counted under the id of `''` where the
 * dictionary has it, so each group is one value (a value has one id in its dictionary, `encodeRows`) and
 * distinct customers stay exact.
 */
const paymentsById = (id: string, dictionary: DictionaryName, select: string) => {
  const empty = `(SELECT min(id) FROM dict WHERE dictionary = ${sqlLiteral(dictionary)} AND value = '')`;
  return (
    `(SELECT coalesce(d.value, '') AS value, c.* EXCLUDE (id) FROM (SELECT id, ${select} FROM ` +
    `(SELECT coalesce(id, ${empty}) AS id, cents, customer FROM (SELECT ${id} AS id, cents, customer FROM p)) x ` +
    `GROUP BY id) c LEFT JOIN ${entriesOf(dictionary)} d ON d.id = c.id)`
  );
};
