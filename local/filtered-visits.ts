import { existsSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { FilteredVisitTotals, FilteredVisits } from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
import { eachDay } from '../lambdas/domain/range.js';
import { BREAKDOWN_COLUMNS, filterSql } from './filter-sql.js';
import { dictionaryFilePath, monthFilePath } from './visit-table.js';
import { sqlLiteral } from './sql.js';

/**
 * The filtered reads of the local visit table (`FilteredVisits`): DuckDB in
 * process over the files `LocalVisitTable` writes, reading only the months
 * of the range and, within them, the range's days (row groups skipped by
 * their min/max of `day`).
 */
export class LocalFilteredVisits implements FilteredVisits {
  private db: Promise<DuckDBConnection> | undefined;

  /** @param root the visit table's directory (`LocalVisitTable`'s) */
  constructor(private readonly root: string) {}

  private connect(): Promise<DuckDBConnection> {
    this.db ??= DuckDBInstance.create(':memory:').then((instance) => instance.connect());
    return this.db;
  }

  /** The `WITH` clause defining `dict` and `v` (the range's matching visits), or null when no month of the range was written. */
  private matching(site: string, filter: Filter, range: { from: string; to: string }): string | null {
    const months = [...new Set(eachDay(range.from, range.to).map((d) => d.slice(0, 7)))];
    const files = months.map((m) => monthFilePath(this.root, site, m)).filter((f) => existsSync(f));
    if (files.length === 0) return null;
    const dictFile = dictionaryFilePath(this.root, site);
    const dict = existsSync(dictFile)
      ? `SELECT dictionary, value, id FROM read_parquet(${sqlLiteral(dictFile)})`
      : `SELECT NULL::VARCHAR AS dictionary, NULL::VARCHAR AS value, NULL::UINTEGER AS id WHERE false`;
    return (
      `WITH dict AS (${dict}), v AS (SELECT * FROM read_parquet([${files.map(sqlLiteral).join(', ')}]) ` +
      `WHERE day BETWEEN ${sqlLiteral(range.from)}::DATE AND ${sqlLiteral(range.to)}::DATE AND ${filterSql(filter)})`
    );
  }

  async totals(site: string, filter: Filter, range: { from: string; to: string }): Promise<FilteredVisitTotals> {
    const withClause = this.matching(site, filter, range);
    if (withClause === null)
      return { visitors: 0, sessions: 0, pageviews: 0, bounces: 0, timed_visits: 0, duration_ms: 0 };
    const db = await this.connect();
    const reader = await db.runAndReadAll(
      `${withClause} SELECT count(DISTINCT visitor_id) AS visitors, count(*) AS sessions, ` +
        `coalesce(sum(pageviews), 0) AS pageviews, count(*) FILTER (WHERE bounce) AS bounces, ` +
        `count(*) FILTER (WHERE timed) AS timed_visits, coalesce(sum(duration_ms), 0) AS duration_ms FROM v`,
    );
    const [r] = reader.getRowObjectsJS();
    return {
      visitors: Number(r?.visitors ?? 0),
      sessions: Number(r?.sessions ?? 0),
      pageviews: Number(r?.pageviews ?? 0),
      bounces: Number(r?.bounces ?? 0),
      timed_visits: Number(r?.timed_visits ?? 0),
      duration_ms: Number(r?.duration_ms ?? 0),
    };
  }

  async breakdown(
    site: string,
    filter: Filter,
    range: { from: string; to: string },
    dimension: Dimension,
  ): Promise<Map<string, number>> {
    const withClause = this.matching(site, filter, range);
    if (withClause === null) return new Map();
    const { id, dictionary } = BREAKDOWN_COLUMNS[dimension];
    const db = await this.connect();
    // A NULL id is a visit without a value: NONE (''), as the rollups key it.
    const reader = await db.runAndReadAll(
      `${withClause} SELECT coalesce(d.value, '') AS value, count(*) AS visits FROM (SELECT ${id} AS id FROM v) x ` +
        `LEFT JOIN dict d ON d.dictionary = ${sqlLiteral(dictionary)} AND d.id = x.id GROUP BY 1`,
    );
    return new Map(reader.getRowObjectsJS().map((r) => [String(r.value), Number(r.visits)]));
  }

  /** Closes DuckDB. */
  async close(): Promise<void> {
    const db = await this.db;
    this.db = undefined;
    db?.closeSync();
  }
}
