import { existsSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { FilteredRange } from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import { eachDay } from '../lambdas/domain/range.js';
import {
  NO_PAYMENTS,
  NO_VISITS,
  dictionaryFilePath,
  monthFilePath,
  openFilePath,
  paymentsFilePath,
} from './visit-table.js';
import { sqlLiteral } from './sql.js';
import { SharedScans, type SharedScanSource } from './shared-scans.js';
import { FilterResolutions, dictRelation, fileVersion } from './filter-resolutions.js';
import { FileForms } from './file-forms.js';

/**
 * The relations the local filtered engine's reports select from: over the files `LocalVisitTable`
 * writes, the range's months only, a filter's matching visits (`v`) and credited payments (`p`), with
 * the site's dictionary (`dict`); and the DuckDB connection they run on.
 */
export class FilteredRelations {
  private db: Promise<DuckDBConnection> | undefined;
  private readonly resolutions: FilterResolutions;
  private readonly shared = new SharedScans(() => this.connect());
  private readonly forms = new FileForms(() => this.connect());

  /** @param root the visit table's directory (`LocalVisitTable`'s) */
  constructor(private readonly root: string) {
    this.resolutions = new FilterResolutions(root, () => this.connect());
  }

  /** The in-process DuckDB connection, opened on first use. */
  connect(): Promise<DuckDBConnection> {
    this.db ??= DuckDBInstance.create(':memory:').then((instance) => instance.connect());
    return this.db;
  }

  /**
   * The `WITH` clause of `dict`, `v` (the range's matching visits), `q` (the range's payments, as stored) and
   * `p` (the range's counted payments credited to a matching visit, tested on the visit's columns they
   * carry, `paid_day` their day, `matched` when the visit started in the range) for a filter and range, and
   * the filter's SQL (`where`); `shared`, what `SharedScans` keeps of `v` and `p` for a load, and its key.
   */
  async relations(
    site: string,
    filter: Filter,
    range: FilteredRange,
  ): Promise<{ sql: string; where: string; shared: { key: string; source: SharedScanSource } | null }> {
    const day = (d: string) => `${sqlLiteral(d)}::DATE`;
    const days = `day BETWEEN ${day(range.from)} AND ${day(range.to)}`;
    // The open days' file holds the days after the last closed one: the range's days select from it too.
    const visitFiles = fileList((m) => monthFilePath(this.root, site, m), range.from, range.to, [
      openFilePath(this.root, site),
    ]);
    const paymentFiles = fileList((m) => paymentsFilePath(this.root, site, m), range.from, range.to);
    const visits = readFiles(visitFiles) ?? NO_VISITS;
    const payments = readFiles(paymentFiles) ?? NO_PAYMENTS;
    const { sql: where, lookup } = await this.resolutions.where(site, filter);
    // Distinct visitors are counted over the stored visitor key (the sketch's, `local/visitor-key.ts`), visits
    // over 64-bit hashes of their ids (`docs/data-model.md`, "Filtered reports").
    // Files of an older form read as the current one (`FileForms`).
    const columns = await this.forms.columns(visitFiles);
    const v = `SELECT ${columns}, hash(visit_id) AS visit_key FROM ${visits} WHERE ${days} AND ${where}`;
    const q = `SELECT ${await this.forms.columns(paymentFiles)} FROM ${payments} WHERE ${days}`;
    const p =
      `SELECT * EXCLUDE (day), day AS paid_day, visit_day BETWEEN ${day(range.from)} AND ${day(range.to)} AS matched ` +
      `FROM q WHERE NOT failed AND coalesce(credited, false) AND ${where}`;
    const sql = `WITH dict AS (${dictRelation(this.root, site)}), v AS (${v}), q AS (${q}), p AS (${p})`;
    // Only a filter with a lookup costs more to evaluate per panel than to keep its matches (`hasLookup`).
    if (!lookup) return { sql, where, shared: null };
    const versions = [dictionaryFilePath(this.root, site), ...visitFiles, ...paymentFiles].map(fileVersion);
    const shared = {
      key: [site, JSON.stringify(filter), range.from, range.to, ...versions].join('\n'),
      source: {
        rows:
          visitFiles.length === 0
            ? 'SELECT 0'
            : `SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata([${visitFiles.map(sqlLiteral).join(', ')}])`,
        visits: `WITH dict AS (${dictRelation(this.root, site)}) SELECT * EXCLUDE (visit_id, visitor_id, start_ts) FROM (${v})`,
        payments: `WITH dict AS (${dictRelation(this.root, site)}), q AS (${q}) ${p}`,
      },
    };
    return { sql, where, shared };
  }

  /**
   * Runs `select` over `dict`, `v` and `p`: for a filter with a lookup (`hasLookup`), with the other requests
   * of the load that run at once, over the matching visits and payments scanned once for them all
   * (`SharedScans`), unless the range is too large to keep; otherwise alone.
   */
  async overShared(site: string, filter: Filter, range: FilteredRange, select: string) {
    const db = await this.connect();
    const { sql, shared } = await this.relations(site, filter, range);
    if (shared === null) return db.runAndReadAll(`${sql} ${select}`);
    return this.shared.with(shared.key, shared.source, (tables) =>
      db.runAndReadAll(
        tables === null
          ? `${sql} ${select}`
          : `WITH dict AS (${dictRelation(this.root, site)}), v AS (FROM ${tables.v}), p AS (FROM ${tables.p}) ${select}`,
      ),
    );
  }

  /** Closes DuckDB. */
  async close(): Promise<void> {
    const db = await this.db;
    this.db = undefined;
    db?.closeSync();
  }
}

/** The written files of a day span's months (and `extra`). */
function fileList(path: (month: string) => string, from: string, to: string, extra: string[] = []): string[] {
  const months = [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))];
  return [...months.map(path), ...extra].filter((f) => existsSync(f));
}

/** `read_parquet` of files, or null when there is none. */
function readFiles(files: readonly string[]): string | null {
  // By name: a file written before a column was added reads it as NULL.
  return files.length > 0 ? `read_parquet([${files.map(sqlLiteral).join(', ')}], union_by_name = true)` : null;
}

/** The aggregate columns `keys` of a result row as numbers; an aggregate over no rows (SQL NULL, or no row) is 0. */
export function countsOf<K extends string>(row: Record<string, unknown>, keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, Number(row[k] ?? 0)])) as Record<K, number>;
}
