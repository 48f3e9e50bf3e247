import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { FilteredRange } from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import type { Dimension } from '../lambdas/domain/rollup.js';
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
import { testsList } from './filter-sql.js';
import { FilterResolutions, dictRelation } from './filter-resolutions.js';
import { fileVersion } from './file-version.js';
import { FileForms } from './file-forms.js';

/**
 * How the engine shares one evaluation of a filter among the requests of a load (`SharedScans`), and the
 * bounds of its DuckDB: `memoryBytes` its `memory_limit` (past it, the shared tables and large aggregates
 * spill to a temporary directory of its own), `spillBytes` what that directory may take for the tables
 * (with the memory, the tables of a range whose files hold more rows than fit at `SHARED_BYTES_PER_VISIT`
 * are not made, and its panels each scan alone). Measured: `docs/data-model.md`, "Filtered reports",
 * "One evaluation per load".
 */
export interface SharingOptions {
  memoryBytes: number;
  spillBytes: number;
  /** Share every filter's load, not only a filter that tests a list column (`testsList`): to measure the choice. */
  everyFilter?: boolean;
}

/**
 * Bytes a matching visit takes in the shared tables, its credited payments included: the most measured at
 * the bench site's full scale (114 to 127) rounded up; a range's visit files' rows bound its matches.
 */
const SHARED_BYTES_PER_VISIT = 130;

/**
 * The local server's bounds (`npm start`): 1 GiB holds a 30-day load's tables at the bench site's full scale
 * (1M visits a month: 211 MiB for the range and the period before) and a year's (1.1 GiB) spills about a
 * tenth to disk, at no measurable cost; with 8 GiB of disk, ranges of up to some 74M visits are shared.
 */
export const LOCAL_SHARING: SharingOptions = { memoryBytes: 2 ** 30, spillBytes: 8 * 2 ** 30 };

/** The breakdowns the shared tables answer: the first tab of each of the dashboard's panels, whose columns they hold. */
export const SHARED_BREAKDOWNS: ReadonlySet<Dimension> = new Set<Dimension>(['channel', 'page', 'country', 'device']);

/** The columns of the shared tables: what the overview, series, goals and `SHARED_BREAKDOWNS` read, no more. */
const SHARED_DIMENSION_COLUMNS = 'channel, country, device, pages, goals';
const SHARED_VISIT_COLUMNS = `day, visitor_key, pageviews, bounce, timed, duration_ms, ${SHARED_DIMENSION_COLUMNS}`;
const SHARED_PAYMENT_COLUMNS = `paid_day, cents, customer, matched, ${SHARED_DIMENSION_COLUMNS}`;

/**
 * The relations the local filtered engine's reports select from: over the files `LocalVisitTable`
 * writes, the range's months only, a filter's matching visits (`v`) and credited payments (`p`), with
 * the site's dictionary (`dict`); and the DuckDB connection they run on.
 */
export class FilteredRelations {
  private db: Promise<DuckDBConnection> | undefined;
  private readonly resolutions: FilterResolutions;
  private readonly shared: SharedScans;
  private readonly forms = new FileForms(() => this.connect());
  private spillDirectory: string | undefined;

  /**
   * @param root the visit table's directory (`LocalVisitTable`'s)
   * @param sharing how a load's requests share one evaluation of the filter, or null for none (an engine
   * that serves one request at a time, as a Lambda instance does, would only copy the matches for nothing)
   */
  constructor(
    private readonly root: string,
    private readonly sharing: SharingOptions | null,
  ) {
    this.resolutions = new FilterResolutions(root, () => this.connect());
    const room = sharing ? sharing.memoryBytes + sharing.spillBytes : 0;
    this.shared = new SharedScans(() => this.connect(), Math.floor(room / SHARED_BYTES_PER_VISIT));
  }

  /** Whether the requests of a load that run at once share work (`SharedScans`): an engine built with `sharing`. */
  get sharesLoads(): boolean {
    return this.sharing !== null;
  }

  /** The in-process DuckDB connection, opened on first use (with its bounds and spill directory when sharing). */
  connect(): Promise<DuckDBConnection> {
    this.db ??= this.open();
    return this.db;
  }

  private async open(): Promise<DuckDBConnection> {
    if (!this.sharing) return (await DuckDBInstance.create(':memory:')).connect();
    // Its own directory: DuckDB names its spill files alike in every process.
    this.spillDirectory = mkdtempSync(join(tmpdir(), 'footfall-duckdb-'));
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: `${this.sharing.memoryBytes}B`,
      temp_directory: this.spillDirectory,
      // Bounds the operators' spill; offloaded temporary tables are not held to it (`SHARED_BYTES_PER_VISIT` is).
      max_temp_directory_size: `${this.sharing.spillBytes}B`,
    });
    return instance.connect();
  }

  /**
   * The `WITH` clause of `dict`, `v` (the range's matching visits), `q` (the range's payments, as stored) and
   * `p` (the range's counted payments credited to a matching visit, tested on the visit's columns they
   * carry, `paid_day` their day, `matched` when the visit started in the range) for a filter and range, and
   * the filter's SQL (`where`); `shared`, where the engine shares, the load's key in `SharedScans` and how to
   * make its tables of `v` and `p` (none where the filter tests no list column, `testsList`).
   */
  async relations(
    site: string,
    filter: Filter,
    range: FilteredRange,
  ): Promise<{ sql: string; where: string; shared: { key: string; source: SharedScanSource | null } | null }> {
    const day = (d: string) => `${sqlLiteral(d)}::DATE`;
    const days = `day BETWEEN ${day(range.from)} AND ${day(range.to)}`;
    // The open days' file holds the days after the last closed one: the range's days select from it too.
    const visitFiles = fileList((m) => monthFilePath(this.root, site, m), range.from, range.to, [
      openFilePath(this.root, site),
    ]);
    const paymentFiles = fileList((m) => paymentsFilePath(this.root, site, m), range.from, range.to);
    const visits = readFiles(visitFiles) ?? NO_VISITS;
    const payments = readFiles(paymentFiles) ?? NO_PAYMENTS;
    const where = await this.resolutions.where(site, filter);
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
    if (!this.sharing) return { sql, where, shared: null };
    const versions = [dictionaryFilePath(this.root, site), ...visitFiles, ...paymentFiles].map(fileVersion);
    const dict = `WITH dict AS (${dictRelation(this.root, site)})`;
    const copied = this.sharing.everyFilter || testsList(filter);
    const shared = {
      key: [site, JSON.stringify(filter), range.from, range.to, ...versions].join('\n'),
      source: !copied
        ? null
        : {
            rows:
              visitFiles.length === 0
                ? 'SELECT 0'
                : `SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata([${visitFiles.map(sqlLiteral).join(', ')}])`,
            visits: `${dict} SELECT ${SHARED_VISIT_COLUMNS} FROM (${v})`,
            payments: `${dict}, q AS (${q}) SELECT ${SHARED_PAYMENT_COLUMNS} FROM (${p})`,
          },
    };
    return { sql, where, shared };
  }

  /**
   * The rows of `select` over `dict`, `v` and `p`: with the other requests of the load that run at once, over the
   * matching visits and payments scanned once for them all (`SharedScans`), when the engine shares, the
   * filter tests a list column (`testsList`) and `select` reads only the shared tables' columns
   * (`shareable`); otherwise alone. With `once`, a request of the load that asks the same `select` while
   * another runs it takes its rows (the caller does not change them). With `table`, `select` reads the relation
   * `t` too, the rows of `table(copied)` over the same relations (`copied`: whether `v` is the load's copy of the
   * matching visits, which a query may read twice, or the scan of the files): made once into a temporary table
   * for the requests of a load that ask it at once where the engine shares, else computed in the query.
   */
  async overShared(
    site: string,
    filter: Filter,
    range: FilteredRange,
    select: string,
    {
      shareable = true,
      once = false,
      table,
    }: { shareable?: boolean; once?: boolean; table?: (copied: boolean) => string } = {},
  ): Promise<Array<Record<string, unknown>>> {
    const db = await this.connect();
    const { sql, shared } = await this.relations(site, filter, range);
    const rows = async (query: string) => (await db.runAndReadAll(query)).getRowObjectsJS();
    if (shared === null || !shareable) return rows(`${sql}${table ? `, t AS (${table(false)})` : ''} ${select}`);
    return this.shared.with(shared.key, shared.source, async (tables, load) => {
      // A relation over a table read twice in a query is not copied again (DuckDB materializes such a CTE).
      const over =
        tables === null
          ? sql
          : `WITH dict AS (${dictRelation(this.root, site)}), v AS NOT MATERIALIZED (FROM ${tables.v}), ` +
            `p AS NOT MATERIALIZED (FROM ${tables.p})`;
      const query = table
        ? `${over}, t AS (FROM ${await load.table(`${over} ${table(tables !== null)}`)}) ${select}`
        : `${over} ${select}`;
      return once ? load.once(query, () => rows(query)) : rows(query);
    });
  }

  /** Closes DuckDB. */
  async close(): Promise<void> {
    const db = await this.db;
    this.db = undefined;
    db?.closeSync();
    if (this.spillDirectory) rmSync(this.spillDirectory, { recursive: true, force: true });
    this.spillDirectory = undefined;
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
