import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import {
  DuckDBInstance,
  LIST,
  UINTEGER,
  timestampMillisValue,
  type DuckDBAppender,
  type DuckDBConnection,
} from '@duckdb/node-api';
import {
  ROW_DIMENSIONS,
  dictionaryOf,
  encodeRows,
  monthOf,
  type DictionaryEntry,
  type DictionaryName,
  type PaymentTableRow,
  type VisitRow,
} from '../lambdas/domain/visit-table.js';
import type { PaymentsWritten, VisitTableStore } from '../lambdas/ports.js';
import { sqlLiteral } from './sql.js';
import { visitorKey } from '../lambdas/domain/visitor-sketch.js';
import { DISTINCT_PAGES, FileForms } from './file-forms.js';

/**
 * The visit table on local disk, written through DuckDB as AWS's writer will
 * write it to S3 (`docs/data-model.md`, "Filtered reports"):
 * `<root>/visits/site=<domain>/mo=<YYYY-MM>/data.parquet`, one file per site
 * and site-local month, rows in `sortKey` order, in row groups of
 * `ROW_GROUP_ROWS`; and the site's dictionary,
 * `<root>/dict/site=<domain>/dict.parquet` (dictionary, value, id).
 */

/** Rows per Parquet row group: a month's channel × device cells span several at the bench site's traffic, so readers skip by min/max (`docs/benchmarks.md`). */
export const ROW_GROUP_ROWS = 20_000;

const IDS = LIST(UINTEGER);
const STAGING = 'visit_rows';
const COLUMNS = [
  'visit_id VARCHAR',
  'visitor_id VARCHAR',
  // `visitorKey` of the visitor id, the bits of the visitors' sketch (`local/visitor-key.ts`).
  'visitor_key UBIGINT',
  'day VARCHAR',
  'start_ts TIMESTAMP_MS',
  'pageviews UINTEGER',
  'bounce BOOLEAN',
  'timed BOOLEAN',
  'duration_ms UBIGINT',
  ...ROW_DIMENSIONS.map((d) => `${d} UINTEGER`),
  'landing_page UINTEGER',
  'exit_page UINTEGER',
  'pages UINTEGER[]',
  'goals UINTEGER[]',
  // Outbound link URLs clicked, one id per click (`VisitRow.links`), NULL for none: absent from files written before (`FileForms`).
  'links UINTEGER[]',
  'props UINTEGER[]',
];

/**
 * The payments table's own columns, then the credited visit's columns as the visit table holds them
 * (`CREDITED_COLUMNS`): a payment carries its visit's row, so a range's revenue is filtered without
 * reading or joining the visits it is credited to (`docs/data-model.md`, "Filtered reports").
 * `visit_day` is the credited visit's start day as the visit table has it, and `credited` says that
 * the visit was found there when the file was written: NULL in a file written before the columns
 * were, whose payments then match no filter until the next run rewrites it (every run does).
 */
const PAYMENT_COLUMNS = [
  'key VARCHAR',
  'ts TIMESTAMP_MS',
  'day DATE',
  'cents DOUBLE',
  'customer VARCHAR',
  'failed BOOLEAN',
  'refunded BOOLEAN',
  'visit_id VARCHAR',
  'visit_day DATE',
  'credited BOOLEAN',
];
/** The visit table's columns a payment carries: all but the two it has itself (`visit_id`, `day` as `visit_day`). */
const CREDITED_COLUMNS = COLUMNS.filter((c) => !/^(visit_id|day) /.test(c));

/** An empty relation of typed columns (`name TYPE`), for a table none of whose files was written. */
const emptyRelation = (columns: readonly string[]) =>
  `(SELECT ${columns.map((c) => `NULL::${c.slice(c.indexOf(' ') + 1)} AS ${c.slice(0, c.indexOf(' '))}`).join(', ')} WHERE false)`;
/** The visit table's columns as an empty relation. */
export const NO_VISITS = emptyRelation(COLUMNS.map((c) => (c.startsWith('day ') ? 'day DATE' : c)));
/** The payments table's columns as an empty relation. */
export const NO_PAYMENTS = emptyRelation([...PAYMENT_COLUMNS, ...CREDITED_COLUMNS]);

/** The file of a site's month under the table's root directory. */
export const monthFilePath = (root: string, site: string, month: string) =>
  join(resolve(root), 'visits', `site=${site}`, `mo=${month}`, 'data.parquet');
/** The file of a site's payments of a month under the table's root directory. */
export const paymentsFilePath = (root: string, site: string, month: string) =>
  join(resolve(root), 'payments', `site=${site}`, `mo=${month}`, 'data.parquet');
/** The file of a site's open days (those after its last closed day written) under the table's root directory. */
export const openFilePath = (root: string, site: string) =>
  join(resolve(root), 'visits', `site=${site}`, 'open', 'data.parquet');
const writerState = z.object({ through: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) });
const changesState = z.object({ seen: z.number().int().nonnegative() });
const paymentsState = z.object({
  namespace: z.string(),
  counters: z.array(z.tuple([z.string().regex(/^\d{4}-\d{2}$/), z.number().int().nonnegative()])),
  openDigest: z.string(),
  visitsFrom: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  openSource: z.string().optional(),
  rowForm: z.number().int().positive().optional(),
});
/** The writer's state of a site: its last closed day written. */
export const statePath = (root: string, site: string) => join(resolve(root), 'state', `site=${site}`, 'written.json');
/** The writer's state of a site: when it last looked for changed archive days. */
export const changesPath = (root: string, site: string) => join(resolve(root), 'state', `site=${site}`, 'changes.json');
/** The writer's state of a site: the payment list's month counters its payments months were written from. */
export const paymentsStatePath = (root: string, site: string) =>
  join(resolve(root), 'state', `site=${site}`, 'payments.json');
/** The file of a site's dictionary under the table's root directory. */
export const dictionaryFilePath = (root: string, site: string) =>
  join(resolve(root), 'dict', `site=${site}`, 'dict.parquet');

/**
 * What a reader and the bench's cache depend on in the files' format: columns, row group size, compression,
 * and the key-value metadata every visit and payments file carries (`DISTINCT_PAGES`).
 */
export const TABLE_FORMAT = {
  columns: COLUMNS,
  paymentColumns: [...PAYMENT_COLUMNS, ...CREDITED_COLUMNS],
  rowGroupRows: ROW_GROUP_ROWS,
  compression: 'ZSTD',
  metadata: DISTINCT_PAGES,
} as const;

/** The COPY option of a visit or payments file: its `DISTINCT_PAGES` mark. */
const MARK = `, KV_METADATA {${DISTINCT_PAGES.key}: '${DISTINCT_PAGES.value}'}`;

/**
 * The visit files a write of payments reads its credited visits from: the months of their start days
 * (`visit_day`) and the open days' file.
 */
export function creditedVisitFiles(root: string, site: string, rows: readonly PaymentTableRow[]): string[] {
  const months = new Set(rows.flatMap((r) => (r.visit_day === null ? [] : [r.visit_day.slice(0, 7)])));
  return [...[...months].sort().map((m) => monthFilePath(root, site, m)), openFilePath(root, site)];
}

const appendId = (appender: DuckDBAppender, id: number | null) =>
  id === null ? appender.appendNull() : appender.appendUInteger(id);

/** The columns `rowDecoder` reads, over a relation of the table's rows. */
export const DECODED_COLUMNS = '*, day::VARCHAR AS day_text, epoch_ms(start_ts) AS start_ms';

/**
 * A result row of `DECODED_COLUMNS` back to text through a site's dictionary.
 * @param source what is read, for the error
 * @throws Error when an id is not in its dictionary
 */
export function rowDecoder(
  entries: readonly DictionaryEntry[],
  source: string,
): (r: Record<string, unknown>) => VisitRow {
  const names = new Map<string, Map<number, string>>();
  for (const e of entries) {
    const ids = names.get(e.dictionary) ?? new Map<number, string>();
    ids.set(e.id, e.value);
    names.set(e.dictionary, ids);
  }
  const name = (dictionary: DictionaryName, id: unknown): string | null => {
    if (id === null) return null;
    const value = names.get(dictionary)?.get(Number(id));
    if (value === undefined) throw new Error(`${source}: id ${String(id)} is not in the ${dictionary} dictionary`);
    return value;
  };
  return (r) => ({
    visit_id: String(r.visit_id),
    visitor_id: String(r.visitor_id),
    day: String(r.day_text),
    start_ms: Number(r.start_ms),
    pageviews: Number(r.pageviews),
    bounce: r.bounce === true,
    timed: r.timed === true,
    duration_ms: Number(r.duration_ms),
    dimensions: Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, name(d, r[d])])) as VisitRow['dimensions'],
    landing_page: name('page', r.landing_page) ?? '',
    exit_page: name('page', r.exit_page),
    pages: (r.pages as unknown[]).map((id) => name('page', id) ?? ''),
    goals: (r.goals as unknown[]).map((id) => name('goal', id) ?? ''),
    links: ((r.links as unknown[] | null) ?? []).map((id) => name('link', id) ?? ''),
    props: ((r.props as unknown[] | null) ?? []).map((id) => JSON.parse(name('prop', id) ?? '') as [string, string]),
  });
}

export class LocalVisitTable implements VisitTableStore {
  private readonly root: string;
  private db: Promise<DuckDBConnection> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly forms = new FileForms(() => this.connect());

  /** @param root the table's directory (created as needed) */
  constructor(root: string) {
    this.root = resolve(root);
  }

  private connect(): Promise<DuckDBConnection> {
    this.db ??= DuckDBInstance.create(':memory:').then((instance) => instance.connect());
    return this.db;
  }

  private monthFile(site: string, month: string): string {
    return monthFilePath(this.root, site, month);
  }

  private dictionaryFile(site: string): string {
    return dictionaryFilePath(this.root, site);
  }

  /**
   * Replaces the site's month with `rows`: the dictionary first (ids only
   * grow, so a month written with an older dictionary still reads), then the
   * month's file, each written to a temp file and renamed over the old one.
   * One write at a time.
   *
   * @throws Error when a row's site-local day is not in `month`
   */
  writeMonth(site: string, month: string, rows: readonly VisitRow[]): Promise<void> {
    const stray = rows.find((r) => monthOf(r) !== month);
    if (stray) return Promise.reject(new Error(`visit ${stray.visit_id} started on ${stray.day}, not in ${month}`));
    return this.serially(() => this.writeRows(site, this.monthFile(site, month), rows));
  }

  /** Replaces the site's open days with `rows` (any days; readers select by `day`). */
  writeOpen(site: string, rows: readonly VisitRow[]): Promise<void> {
    return this.serially(() => this.writeRows(site, openFilePath(this.root, site), rows));
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeRows(site: string, file: string, rows: readonly VisitRow[]): Promise<void> {
    const db = await this.connect();
    const dictionary = dictionaryOf(await this.readDictionary(site));
    const encoded = encodeRows(rows, dictionary);
    if (encoded.added.length > 0) {
      const all = [...dictionary].flatMap(([name, ids]) =>
        [...ids].map(([value, id]) => ({ dictionary: name, value, id })),
      );
      await db.run(`CREATE OR REPLACE TEMP TABLE dict_rows (dictionary VARCHAR, value VARCHAR, id UINTEGER)`);
      const appender = await db.createAppender('dict_rows', 'main', 'temp');
      for (const e of all) {
        appender.appendVarchar(e.dictionary);
        appender.appendVarchar(e.value);
        appender.appendUInteger(e.id);
        appender.endRow();
      }
      appender.closeSync();
      await this.copy(db, `SELECT * FROM dict_rows ORDER BY dictionary, id`, this.dictionaryFile(site), '');
    }
    await db.run(`CREATE OR REPLACE TEMP TABLE ${STAGING} (${COLUMNS.join(', ')})`);
    const appender = await db.createAppender(STAGING, 'main', 'temp');
    try {
      for (const row of encoded.rows) {
        appender.appendVarchar(row.visit_id);
        appender.appendVarchar(row.visitor_id);
        appender.appendUBigInt(visitorKey(row.visitor_id));
        appender.appendVarchar(row.day);
        appender.appendTimestampMilliseconds(timestampMillisValue(BigInt(row.start_ms)));
        appender.appendUInteger(row.pageviews);
        appender.appendBoolean(row.bounce);
        appender.appendBoolean(row.timed);
        appender.appendUBigInt(BigInt(row.duration_ms));
        for (const d of ROW_DIMENSIONS) appendId(appender, row.dimensions[d]);
        appender.appendUInteger(row.landing_page);
        appendId(appender, row.exit_page);
        appender.appendList(row.pages, IDS);
        appender.appendList(row.goals, IDS);
        // Most visits click no link: NULL for none spares the appender an empty list's cost (measured:
        // `docs/benchmarks.md`, "Outbound links by URL under filters"), and every reader reads NULL as none.
        if (row.links.length === 0) appender.appendNull();
        else appender.appendList(row.links, IDS);
        appender.appendList(row.props, IDS);
        appender.endRow();
      }
    } finally {
      appender.closeSync();
    }
    // The staging table keeps the appender's order, which is `sortKey`'s.
    await this.copy(
      db,
      `SELECT * REPLACE (day::DATE AS day) FROM ${STAGING}`,
      file,
      `, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}${MARK}`,
    );
  }

  /**
   * Replaces the site's payments of `month` (`YYYY-MM`, site-local) with `rows`, in time order, each with
   * its credited visit's columns as the visit table holds them now (`PAYMENT_COLUMNS`; read from
   * `creditedVisitFiles`): write the visits first, as the writer's run does. A payment whose visit is not
   * in the table is written with `credited` false and matches no filter.
   * @throws Error when a row's day is not in `month`
   */
  writePayments(site: string, month: string, rows: readonly PaymentTableRow[]): Promise<void> {
    return this.serially(async () => {
      const stray = rows.find((r) => r.day.slice(0, 7) !== month);
      if (stray) throw new Error(`payment ${stray.key} is on ${stray.day}, not in ${month}`);
      const db = await this.connect();
      await db.run(
        `CREATE OR REPLACE TEMP TABLE payment_rows (key VARCHAR, ts TIMESTAMP_MS, day VARCHAR, cents DOUBLE, customer VARCHAR, failed BOOLEAN, visit_id VARCHAR, refunded BOOLEAN)`,
      );
      const appender = await db.createAppender('payment_rows', 'main', 'temp');
      try {
        for (const r of [...rows].sort((a, b) => a.ts - b.ts)) {
          appender.appendVarchar(r.key);
          appender.appendTimestampMilliseconds(timestampMillisValue(BigInt(r.ts)));
          appender.appendVarchar(r.day);
          appender.appendDouble(r.cents);
          appender.appendVarchar(r.customer);
          appender.appendBoolean(r.failed);
          if (r.visit_id === null) appender.appendNull();
          else appender.appendVarchar(r.visit_id);
          appender.appendBoolean(r.refunded);
          appender.endRow();
        }
      } finally {
        appender.closeSync();
      }
      const files = creditedVisitFiles(this.root, site, rows).filter((f) => existsSync(f));
      const visits =
        files.length === 0
          ? NO_VISITS
          : `(SELECT ${await this.forms.columns(files)} FROM read_parquet([${files.map(sqlLiteral).join(', ')}], union_by_name = true) ` +
            `WHERE visit_id IN (SELECT visit_id FROM payment_rows))`;
      const carried = CREDITED_COLUMNS.map((c) => `v.${c.slice(0, c.indexOf(' '))}`).join(', ');
      await this.copy(
        db,
        `SELECT p.key, p.ts, p.day::DATE AS day, p.cents, p.customer, p.failed, p.refunded, p.visit_id, ` +
          `v.day AS visit_day, v.visit_id IS NOT NULL AS credited, ${carried} ` +
          `FROM payment_rows p LEFT JOIN ${visits} v ON v.visit_id = p.visit_id ORDER BY p.ts, p.key`,
        paymentsFilePath(this.root, site, month),
        MARK,
      );
    });
  }

  async readPayments(site: string, month: string): Promise<PaymentTableRow[]> {
    const file = paymentsFilePath(this.root, site, month);
    if (!existsSync(file)) return [];
    const db = await this.connect();
    const reader = await db.runAndReadAll(
      `SELECT key, epoch_ms(ts) AS ts, day::VARCHAR AS day, cents, customer, failed, refunded, visit_id, ` +
        `visit_day::VARCHAR AS visit_day FROM read_parquet(${sqlLiteral(file)}) ORDER BY ts, key`,
    );
    return reader.getRowObjectsJS().map((r) => ({
      key: String(r.key),
      ts: Number(r.ts),
      day: String(r.day),
      cents: Number(r.cents),
      customer: String(r.customer),
      failed: r.failed === true,
      refunded: r.refunded === true,
      visit_id: r.visit_id === null ? null : String(r.visit_id),
      visit_day: r.visit_day === null ? null : String(r.visit_day),
    }));
  }

  /**
   * Rewrites each of the site's files in an old form (visit months, open days, payments months: without
   * `visitor_key` or `links`, or pages not marked distinct, `DISTINCT_PAGES`) into the current form, as readers
   * read them (`beforeCurrentForm`): the key computed by `visitorKeySql` (held equal to `visitorKey`), each
   * visit's pages once, `links` NULL (a file without the column kept no link URLs; the writer writes a
   * site's table again from the archive at its first refresh under the release that added it, `TABLE_ROW_FORM`),
   * columns in the writer's order, rows and row groups as they were. This saves readers that work, and brings a copy of a table (the bench's cached site, `bench/upgrade-site.ts`) to the
   * current format. Returns the files rewritten.
   * @throws Error when a file cannot be read or written
   */
  upgradeOldForms(site: string): Promise<string[]> {
    return this.serially(async () => {
      const db = await this.connect();
      const { visits, payments } = await this.months(site);
      const names = (columns: readonly string[]) => columns.map((c) => c.slice(0, c.indexOf(' ')));
      const files = [
        ...[...visits.map((m) => this.monthFile(site, m)), openFilePath(this.root, site)].map((file) => ({
          file,
          columns: names(TABLE_FORMAT.columns),
          options: `, ROW_GROUP_SIZE ${ROW_GROUP_ROWS}${MARK}`,
        })),
        ...payments.map((m) => ({
          file: paymentsFilePath(this.root, site, m),
          columns: names(TABLE_FORMAT.paymentColumns),
          options: MARK,
        })),
      ];
      const rewritten: string[] = [];
      for (const { file, columns, options } of files) {
        if (!existsSync(file)) continue;
        const form = await this.forms.columns([file]);
        if (form === '*') continue;
        const read = `SELECT ${form} FROM read_parquet(${sqlLiteral(file)})`;
        await this.copy(db, `SELECT ${columns.join(', ')} FROM (${read})`, file, options);
        rewritten.push(file);
      }
      return rewritten;
    });
  }

  async months(site: string): Promise<{ visits: string[]; payments: string[] }> {
    const monthsUnder = async (table: string) => {
      const dir = join(this.root, table, `site=${site}`);
      if (!existsSync(dir)) return [];
      const names = await readdir(dir);
      return names.flatMap((n) => (/^mo=\d{4}-\d{2}$/.test(n) ? [n.slice(3)] : [])).sort();
    };
    return { visits: await monthsUnder('visits'), payments: await monthsUnder('payments') };
  }

  async writtenThrough(site: string): Promise<string | null> {
    const file = statePath(this.root, site);
    if (!existsSync(file)) return null;
    return writerState.parse(JSON.parse(await readFile(file, 'utf8'))).through;
  }

  setWrittenThrough(site: string, day: string): Promise<void> {
    return this.writeState(statePath(this.root, site), { through: day });
  }

  async changesSeen(site: string): Promise<number | null> {
    const file = changesPath(this.root, site);
    if (!existsSync(file)) return null;
    return changesState.parse(JSON.parse(await readFile(file, 'utf8'))).seen;
  }

  setChangesSeen(site: string, ms: number): Promise<void> {
    return this.writeState(changesPath(this.root, site), { seen: ms });
  }

  async paymentsWritten(site: string): Promise<PaymentsWritten | null> {
    const file = paymentsStatePath(this.root, site);
    if (!existsSync(file)) return null;
    const state = paymentsState.parse(JSON.parse(await readFile(file, 'utf8')));
    return { ...state, counters: new Map(state.counters) };
  }

  setPaymentsWritten(site: string, state: PaymentsWritten): Promise<void> {
    const counters = [...state.counters].sort(([a], [b]) => (a < b ? -1 : 1));
    return this.writeState(paymentsStatePath(this.root, site), { ...state, counters });
  }

  /** Replaces a state file with `value` as JSON (a temp file renamed over it), one write at a time. */
  private writeState(file: string, value: unknown): Promise<void> {
    return this.serially(async () => {
      await mkdir(join(file, '..'), { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify(value));
      await rename(temp, file);
    });
  }

  dropSite(site: string): Promise<void> {
    return this.serially(async () => {
      for (const table of ['visits', 'payments', 'dict', 'state'])
        await rm(join(this.root, table, `site=${site}`), { recursive: true, force: true });
    });
  }

  private async copy(db: DuckDBConnection, select: string, file: string, options: string): Promise<void> {
    const dir = join(file, '..');
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.data.${process.pid}.tmp`);
    try {
      await db.run(
        `COPY (${select}) TO ${sqlLiteral(temp)} (FORMAT PARQUET, COMPRESSION ${TABLE_FORMAT.compression}${options})`,
      );
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** The site's dictionary entries (none before its first write). */
  async readDictionary(site: string): Promise<DictionaryEntry[]> {
    const file = this.dictionaryFile(site);
    if (!existsSync(file)) return [];
    const db = await this.connect();
    const rows = (
      await db.runAndReadAll(`SELECT dictionary, value, id FROM read_parquet(${sqlLiteral(file)})`)
    ).getRowsJS();
    return rows.map(([dictionary, value, id]) => ({
      dictionary: String(dictionary) as DictionaryName,
      value: String(value),
      id: Number(id),
    }));
  }

  /**
   * The month's rows decoded back to text through the dictionary, in the
   * file's order (what a reader of the table sees; empty when the month was
   * never written).
   */
  async readMonth(site: string, month: string): Promise<VisitRow[]> {
    const file = this.monthFile(site, month);
    if (!existsSync(file)) return [];
    const db = await this.connect();
    const decode = rowDecoder(await this.readDictionary(site), file);
    const reader = await db.runAndReadAll(`SELECT ${DECODED_COLUMNS} FROM read_parquet(${sqlLiteral(file)})`);
    return reader.getRowObjectsJS().map(decode);
  }

  /** Closes DuckDB once the write in progress ends. */
  async close(): Promise<void> {
    await this.queue;
    const db = await this.db;
    this.db = undefined;
    db?.closeSync();
  }
}
