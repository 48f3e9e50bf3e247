import { existsSync, statSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type {
  FilteredPaymentTotals,
  FilteredRange,
  FilteredValue,
  FilteredVisitTotals,
  FilteredVisits,
} from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
import { eachDay } from '../lambdas/domain/range.js';
import {
  BREAKDOWN_COLUMNS,
  filterSql,
  hasLookup,
  propBreakdownColumn,
  resolutionQuery,
  type ResolvedCondition,
  type ResolvedConditions,
} from './filter-sql.js';
import {
  DECODED_COLUMNS,
  NO_PAYMENTS,
  NO_VISITS,
  dictionaryFilePath,
  monthFilePath,
  openFilePath,
  paymentsFilePath,
  rowDecoder,
} from './visit-table.js';
import type {
  CreditedPayment,
  FilteredGoalCounts,
  FilteredInput,
  FilteredSeries,
  SummedInterval,
} from '../lambdas/domain/reports/filtered.js';
import type { DictionaryName } from '../lambdas/domain/visit-table.js';
import { sqlLiteral } from './sql.js';
import type { PropKeyCounts } from '../lambdas/domain/reports/prop-keys.js';
import { SharedScans, type SharedScanSource } from './shared-scans.js';
import type { ListClass } from '../lambdas/domain/payments/contribution.js';

/**
 * The filtered reads of the local visit and payments tables
 * (`FilteredVisits`): DuckDB in process over the files `LocalVisitTable`
 * writes, reading only the months of the range and, within them, the days
 * asked for (row groups skipped
 * by their min/max of `day`). A payment carries its credited visit's
 * columns (`LocalVisitTable.writePayments`), so revenue reads only the
 * range's payment months and no visit outside the range.
 */
export class LocalFilteredVisits implements FilteredVisits {
  private db: Promise<DuckDBConnection> | undefined;
  private readonly resolutions = new Map<string, Promise<ResolvedCondition[]>>();
  private readonly shared = new SharedScans(() => this.connect());

  /** @param root the visit table's directory (`LocalVisitTable`'s) */
  constructor(private readonly root: string) {}

  private connect(): Promise<DuckDBConnection> {
    this.db ??= DuckDBInstance.create(':memory:').then((instance) => instance.connect());
    return this.db;
  }

  /** The written files of a day span's months (and `extra`). */
  private fileList(path: (month: string) => string, from: string, to: string, extra: string[] = []): string[] {
    const months = [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))];
    return [...months.map(path), ...extra].filter((f) => existsSync(f));
  }

  /** `read_parquet` of files, or null when there is none. */
  private static readFiles(files: readonly string[]): string | null {
    // By name: a file written before a column was added reads it as NULL.
    return files.length > 0 ? `read_parquet([${files.map(sqlLiteral).join(', ')}], union_by_name = true)` : null;
  }

  /** The relation `dict` of a site: its dictionary file, or an empty relation when none was written. */
  private dictRelation(site: string): string {
    const dictFile = dictionaryFilePath(this.root, site);
    return existsSync(dictFile)
      ? `SELECT dictionary, value, id FROM read_parquet(${sqlLiteral(dictFile)})`
      : `SELECT NULL::VARCHAR AS dictionary, NULL::VARCHAR AS value, NULL::UINTEGER AS id WHERE false`;
  }

  /**
   * The filter as SQL (`filterSql`), its conditions on one-id columns resolved against the site's dictionary
   * first, so their ids are constants the Parquet reader skips row groups by. Resolutions are kept per
   * dictionary file version (its size and modification time) and filter, for the requests of a load.
   */
  private async where(site: string, filter: Filter): Promise<{ sql: string; lookup: boolean }> {
    const query = resolutionQuery(filter);
    if (query === null) return { sql: filterSql(filter, new Map()), lookup: hasLookup(filter, new Map()) };
    const dictFile = dictionaryFilePath(this.root, site);
    const version = existsSync(dictFile) ? `${statSync(dictFile).size}:${statSync(dictFile).mtimeMs}` : 'none';
    const key = `${site}\n${version}\n${JSON.stringify(filter)}`;
    let resolving = this.resolutions.get(key);
    if (!resolving) {
      resolving = this.connect()
        .then((db) => db.runAndReadAll(`WITH dict AS (${this.dictRelation(site)}) ${query.sql}`))
        .then((reader) => {
          const rows = new Map(reader.getRowObjectsJS().map((r) => [Number(r.n), r]));
          return query.conditions.map((_, n): ResolvedCondition => {
            const r = rows.get(n);
            return { ids: ((r?.ids as unknown[] | null) ?? []).map(Number), empty: r?.empty === true };
          });
        });
      resolving.catch(() => this.resolutions.delete(key));
      // A few filters' worth: a load asks for one filter, its requests at once.
      if (this.resolutions.size >= RESOLUTIONS_KEPT) this.resolutions.clear();
      this.resolutions.set(key, resolving);
    }
    const list = await resolving;
    const resolved: ResolvedConditions = new Map(
      query.conditions.map((c, n) => [c, list[n] ?? { ids: [], empty: false }]),
    );
    return { sql: filterSql(filter, resolved), lookup: hasLookup(filter, resolved) };
  }

  /**
   * The `WITH` clause of `dict`, `v` (the range's matching visits), `q` (the range's payments, as stored) and
   * `p` (the range's counted payments credited to a matching visit, tested on the visit's columns they
   * carry, `paid_day` their day, `matched` when the visit started in the range) for a filter and range, and
   * the filter's SQL (`where`); `shared`, what `SharedScans` keeps of `v` and `p` for a load, and its key.
   */
  private async relations(
    site: string,
    filter: Filter,
    range: FilteredRange,
  ): Promise<{ sql: string; where: string; shared: { key: string; source: SharedScanSource } | null }> {
    const day = (d: string) => `${sqlLiteral(d)}::DATE`;
    const days = `day BETWEEN ${day(range.from)} AND ${day(range.to)}`;
    // The open days' file holds the days after the last closed one: the range's days select from it too.
    const visitFiles = this.fileList((m) => monthFilePath(this.root, site, m), range.from, range.to, [
      openFilePath(this.root, site),
    ]);
    const paymentFiles = this.fileList((m) => paymentsFilePath(this.root, site, m), range.from, range.to);
    const visits = LocalFilteredVisits.readFiles(visitFiles) ?? NO_VISITS;
    const payments = LocalFilteredVisits.readFiles(paymentFiles) ?? NO_PAYMENTS;
    const { sql: where, lookup } = await this.where(site, filter);
    // Distinct visitors and visits are counted over 64-bit hashes of the text ids (`docs/data-model.md`, "Filtered reports").
    const v = `SELECT *, hash(visitor_id) AS visitor_key, hash(visit_id) AS visit_key FROM ${visits} WHERE ${days} AND ${where}`;
    const q = `SELECT * FROM ${payments} WHERE ${days}`;
    const p =
      `SELECT * EXCLUDE (day), day AS paid_day, visit_day BETWEEN ${day(range.from)} AND ${day(range.to)} AS matched ` +
      `FROM q WHERE NOT failed AND coalesce(credited, false) AND ${where}`;
    const sql = `WITH dict AS (${this.dictRelation(site)}), v AS (${v}), q AS (${q}), p AS (${p})`;
    const versions = [dictionaryFilePath(this.root, site), ...visitFiles, ...paymentFiles].map((f) => {
      const stat = existsSync(f) ? statSync(f) : null;
      return `${f}:${stat?.size ?? 0}:${stat?.mtimeMs ?? 0}`;
    });
    const shared = {
      key: [site, JSON.stringify(filter), range.from, range.to, ...versions].join('\n'),
      source: {
        rows:
          visitFiles.length === 0
            ? 'SELECT 0'
            : `SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata([${visitFiles.map(sqlLiteral).join(', ')}])`,
        visits: `WITH dict AS (${this.dictRelation(site)}) SELECT * EXCLUDE (visit_id, visitor_id, start_ts) FROM (${v})`,
        payments: `WITH dict AS (${this.dictRelation(site)}), q AS (${q}) ${p}`,
      },
    };
    // Only a filter with a lookup costs more to evaluate per panel than to keep its matches (`hasLookup`).
    return { sql, where, shared: lookup ? shared : null };
  }

  /**
   * Runs `select` over `dict`, `v` and `p`: for a filter with a lookup (`hasLookup`), with the other requests
   * of the load that run at once, over the matching visits and payments scanned once for them all
   * (`SharedScans`), unless the range is too large to keep; otherwise alone.
   */
  private async overShared(site: string, filter: Filter, range: FilteredRange, select: string) {
    const db = await this.connect();
    const { sql, shared } = await this.relations(site, filter, range);
    if (shared === null) return db.runAndReadAll(`${sql} ${select}`);
    return this.shared.with(shared.key, shared.source, (tables) =>
      db.runAndReadAll(
        tables === null
          ? `${sql} ${select}`
          : `WITH dict AS (${this.dictRelation(site)}), v AS (FROM ${tables.v}), p AS (FROM ${tables.p}) ${select}`,
      ),
    );
  }

  /**
   * The range's matching visits, decoded, and the range's counted payments credited to a matching visit,
   * each with its visit's row (carried by the payment): the input of the reference reports (`FilteredInput`).
   */
  async input(site: string, filter: Filter, range: FilteredRange): Promise<FilteredInput> {
    const { sql: relations } = await this.relations(site, filter, range);
    const db = await this.connect();
    const entries = (await db.runAndReadAll(`${relations} SELECT dictionary, value, id FROM dict`))
      .getRowObjectsJS()
      .map((r) => ({ dictionary: String(r.dictionary) as DictionaryName, value: String(r.value), id: Number(r.id) }));
    const decode = rowDecoder(entries, `visit table of ${site}`);
    const rows = (await db.runAndReadAll(`${relations} SELECT ${DECODED_COLUMNS} FROM v`))
      .getRowObjectsJS()
      .map(decode);
    const paid = await db.runAndReadAll(
      `${relations} SELECT *, epoch_ms(ts) AS paid_ms, paid_day::VARCHAR AS paid_text, ` +
        `visit_day::VARCHAR AS day_text, epoch_ms(start_ts) AS start_ms FROM p`,
    );
    const payments = paid.getRowObjectsJS().map((r): CreditedPayment => ({
      ts: Number(r.paid_ms),
      day: String(r.paid_text),
      cents: Number(r.cents),
      customer: String(r.customer),
      failed: false,
      visit: decode(r),
    }));
    return { rows, payments };
  }

  /** The first row of a query over the relations; an empty row when no visit was written. */
  private async one(
    site: string,
    filter: Filter,
    range: FilteredRange,
    select: string,
  ): Promise<Record<string, unknown>> {
    return (await this.overShared(site, filter, range, select)).getRowObjectsJS()[0] ?? {};
  }

  async totals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredVisitTotals> {
    const r = await this.one(
      site,
      filter,
      range,
      `SELECT count(DISTINCT visitor_key) AS visitors, count(*) AS sessions, ` +
        `coalesce(sum(pageviews), 0) AS pageviews, count(*) FILTER (WHERE bounce) AS bounces, ` +
        `count(*) FILTER (WHERE timed) AS timed_visits, coalesce(sum(duration_ms), 0) AS duration_ms FROM v`,
    );
    return countsOf(r, ['visitors', 'sessions', 'pageviews', 'bounces', 'timed_visits', 'duration_ms']);
  }

  async payments(site: string, filter: Filter, range: FilteredRange): Promise<FilteredPaymentTotals> {
    const r = await this.one(
      site,
      filter,
      range,
      `SELECT count(*) AS payments, coalesce(sum(cents), 0) AS cents, ` +
        `count(DISTINCT customer) AS customers, count(*) FILTER (WHERE matched) AS matched_payments, ` +
        `coalesce(sum(cents) FILTER (WHERE matched), 0) AS matched_cents, ` +
        `count(DISTINCT customer) FILTER (WHERE matched) AS converted FROM p`,
    );
    return countsOf(r, ['payments', 'cents', 'customers', 'matched_payments', 'matched_cents', 'converted']);
  }

  async breakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    dimension: Dimension,
  ): Promise<Map<string, FilteredValue>> {
    const { id, dictionary } = BREAKDOWN_COLUMNS[dimension];
    return this.valueBreakdown(site, filter, range, id, dictionary, (value) => value);
  }

  async propBreakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    key: string,
  ): Promise<Map<string, FilteredValue>> {
    const { id, value } = propBreakdownColumn(key);
    return this.valueBreakdown(site, filter, range, id, 'prop', value);
  }

  async propKeys(site: string, filter: Filter, range: FilteredRange): Promise<Map<string, PropKeyCounts>> {
    const { sql: relations } = await this.relations(site, filter, range);
    const db = await this.connect();
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
   * named through `dictionary`, whose entry's text `valueOf` turns into the value.
   */
  private async valueBreakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    id: string,
    dictionary: DictionaryName,
    valueOf: (entry: string) => string,
  ): Promise<Map<string, FilteredValue>> {
    // A NULL id is a visit without a value: NONE (''), as the rollups key it.
    const named = (from: string, select: string) =>
      `(SELECT coalesce(${valueOf('d.value')}, '') AS value, ${select} FROM (SELECT ${id} AS id, * FROM ${from}) x ` +
      `LEFT JOIN dict d ON d.dictionary = ${sqlLiteral(dictionary)} AND d.id = x.id GROUP BY 1)`;
    const reader = await this.overShared(
      site,
      filter,
      range,
      `SELECT coalesce(a.value, b.value) AS value, coalesce(a.visits, 0) AS visits, ` +
        `coalesce(b.payments, 0) AS payments, coalesce(b.cents, 0) AS cents, coalesce(b.customers, 0) AS customers ` +
        `FROM ${named('v', 'count(*) AS visits')} a FULL JOIN ` +
        `${named('p', 'count(*) AS payments, sum(x.cents) AS cents, count(DISTINCT x.customer) AS customers')} b USING (value)`,
    );
    return new Map(
      reader.getRowObjectsJS().map((r) => [
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

  /** The series' sums per day or month (`FilteredSeries`): visits by their start day, payments by theirs. */
  async series(site: string, filter: Filter, range: FilteredRange, interval: SummedInterval): Promise<FilteredSeries> {
    const period = (day: string) => (interval === 'day' ? `${day}::VARCHAR` : `strftime(${day}, '%Y-%m')`);
    const rows = (
      await this.overShared(
        site,
        filter,
        range,
        `SELECT 'v' AS kind, ${period('day')} AS period, count(*) AS visits, sum(pageviews) AS pageviews, ` +
          `count(DISTINCT visitor_key) AS visitors, 0 AS payments, 0 AS cents FROM v GROUP BY 2 ` +
          `UNION ALL SELECT 'p', ${period('paid_day')}, 0, 0, 0, count(*), sum(cents) FROM p GROUP BY 2`,
      )
    ).getRowObjectsJS();
    const of = (kind: string) => rows.filter((r) => r.kind === kind);
    return {
      visits: of('v').map((r) => ({
        period: String(r.period),
        visits: Number(r.visits),
        pageviews: Number(r.pageviews),
        visitors: Number(r.visitors),
      })),
      payments: of('p').map((r) => ({
        period: String(r.period),
        payments: Number(r.payments),
        cents: Number(r.cents),
      })),
    };
  }

  /** The goals report's sums (`FilteredGoalCounts`): per goal name of the matching visits and of their credited payments. */
  async goals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredGoalCounts> {
    const named = `JOIN dict g ON g.dictionary = 'goal' AND g.id = x.id GROUP BY g.value`;
    const rows = (
      await this.overShared(
        site,
        filter,
        range,
        `SELECT 'v' AS kind, g.value AS goal, count(DISTINCT x.visit_key) AS visits, count(*) AS completions, ` +
          `count(DISTINCT x.visitor_key) AS visitors, 0 AS payments, 0 AS cents, 0 AS customers ` +
          `FROM (SELECT visit_key, visitor_key, unnest(goals) AS id FROM v WHERE len(goals) > 0) x ${named} ` +
          `UNION ALL SELECT 'p', g.value, 0, 0, 0, count(*), sum(x.cents), count(DISTINCT x.customer) ` +
          `FROM (SELECT cents, customer, unnest(list_distinct(goals)) AS id FROM p WHERE len(goals) > 0) x ${named} ` +
          `UNION ALL SELECT 't', NULL, 0, 0, count(DISTINCT visitor_key), 0, 0, 0 FROM v`,
      )
    ).getRowObjectsJS();
    const goals = new Map<string, FilteredGoalCounts['goals'] extends ReadonlyMap<string, infer V> ? V : never>();
    const zero = { visits: 0, completions: 0, visitors: 0, payments: 0, cents: 0, customers: 0 };
    for (const r of rows) {
      if (r.kind === 't') continue;
      const goal = String(r.goal);
      const g = goals.get(goal) ?? { ...zero };
      if (r.kind === 'v') Object.assign(g, countsOf(r, ['visits', 'completions', 'visitors']));
      else Object.assign(g, countsOf(r, ['payments', 'cents', 'customers']));
      goals.set(goal, g);
    }
    return { visitors: Number(rows.find((r) => r.kind === 't')?.visitors ?? 0), goals };
  }

  async paymentList(
    site: string,
    filter: Filter,
    range: FilteredRange,
    cls: ListClass,
    offset: number,
    limit: number,
  ): Promise<{ total: number; keys: string[] }> {
    const only = LIST_CLASS_SQL[cls];
    if (only === null) return { total: 0, keys: [] };
    const db = await this.connect();
    const { sql, where } = await this.relations(site, filter, range);
    // Failed payments are listed too (their status says so), as in the unfiltered list.
    const listed =
      `${sql}, l AS (SELECT q.key, q.ts FROM q ` + `WHERE ${only} AND coalesce(q.credited, false) AND ${where})`;
    const [counted, page] = await Promise.all([
      db.runAndReadAll(`${listed} SELECT count(*) AS total FROM l`),
      db.runAndReadAll(
        `${listed} SELECT key FROM l ORDER BY ts DESC, key DESC LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`,
      ),
    ]);
    return {
      total: Number(counted.getRowObjectsJS()[0]?.total ?? 0),
      keys: page.getRowObjectsJS().map((r) => String(r.key)),
    };
  }

  async firstPayers(site: string, filter: Filter, range: FilteredRange): Promise<Set<string>> {
    const db = await this.connect();
    const { sql, where } = await this.relations(site, filter, range);
    // A payer's first counted payment of the days: earliest time, ties by key (`payerSummary`'s order). Not
    // `arg_min`: it skips a NULL visit, so a first payment credited to no visit would give way to a later one.
    const reader = await db.runAndReadAll(
      `${sql}, f AS (SELECT *, row_number() OVER (PARTITION BY customer ORDER BY ts, key) AS n ` +
        `FROM q WHERE NOT failed) ` +
        `SELECT customer FROM f WHERE n = 1 AND coalesce(credited, false) AND ${where}`,
    );
    return new Set(reader.getRowObjectsJS().map((r) => String(r.customer)));
  }

  /** Closes DuckDB. */
  async close(): Promise<void> {
    const db = await this.db;
    this.db = undefined;
    db?.closeSync();
  }
}

/** Filter resolutions an engine keeps (`where`). */
const RESOLUTIONS_KEPT = 16;

/** Which of the range's credited payments a list class keeps (`docs/api.md`, "Filters"); null: none (an Unattributed payment matches no filter). */
const LIST_CLASS_SQL: Readonly<Record<ListClass, string | null>> = {
  all: 'true',
  attributed: 'true',
  unattributed: null,
  // A file written before the column reads it as NULL: not refunded, until the next run writes it.
  refunded: 'coalesce(q.refunded, false)',
};

/** The aggregate columns `keys` of a result row as numbers; an aggregate over no rows (SQL NULL, or no row) is 0. */
function countsOf<K extends string>(row: Record<string, unknown>, keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, Number(row[k] ?? 0)])) as Record<K, number>;
}
