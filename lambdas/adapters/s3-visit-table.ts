import { stat } from 'node:fs/promises';
import type { PaymentTableRow, VisitRow } from '../domain/visit-table.js';
import type { PaymentsWritten, VisitTableStore } from '../ports.js';
import {
  LocalVisitTable,
  changesPath,
  paymentsStatePath,
  creditedVisitFiles,
  dictionaryFilePath,
  monthFilePath,
  openFilePath,
  paymentsFilePath,
  statePath,
} from '../../local/visit-table.js';
import type { S3TableFiles } from './s3-table-files.js';

/** A file's modification time (ms), or null when it does not exist. */
const modified = async (path: string): Promise<number | null> => (await stat(path).catch(() => null))?.mtimeMs ?? null;

/**
 * The visit and payments tables in S3 (`VisitTableStore`, `docs/data-model.md` "Filtered reports"):
 * written by the local twin's writer (`LocalVisitTable`: DuckDB's Parquet, the same layout and
 * bytes) into a copy under `/tmp`, each file then put under `VISIT_TABLE_PREFIX` of the archive
 * bucket (`S3TableFiles`); what a write or a read needs (the dictionary, the writer's state, a month)
 * is fetched first, so a cold instance starts from what S3 holds. One writer: the operations
 * function runs one at a time (reserved concurrency 1).
 */
export class S3VisitTable implements VisitTableStore {
  private readonly local: LocalVisitTable;

  constructor(private readonly files: S3TableFiles) {
    this.local = new LocalVisitTable(files.root);
  }

  /** Fetches `paths`, runs `work`, and lets the copies go. */
  private async with<T>(site: string, paths: readonly string[], work: () => Promise<T>): Promise<T> {
    await this.files.fetch(site, paths);
    try {
      return await work();
    } finally {
      await this.files.release(paths);
    }
  }

  /** Writes `file` through `write` with the site's dictionary at hand, then puts the file and, when the write added values, the dictionary. */
  private write(site: string, file: string, write: () => Promise<void>): Promise<void> {
    const dictionary = dictionaryFilePath(this.files.root, site);
    return this.with(site, [dictionary, file], async () => {
      const before = await modified(dictionary);
      await write();
      // The dictionary first: a month written with new ids must never be readable before the ids are.
      if ((await modified(dictionary)) !== before) await this.files.push(site, dictionary);
      await this.files.push(site, file);
    });
  }

  /** @throws Error when a row's day is not in `month`, or S3 fails */
  writeMonth(site: string, month: string, rows: readonly VisitRow[]): Promise<void> {
    const file = monthFilePath(this.files.root, site, month);
    return this.write(site, file, () => this.local.writeMonth(site, month, rows));
  }

  /** @throws Error when S3 fails */
  writeOpen(site: string, rows: readonly VisitRow[]): Promise<void> {
    const file = openFilePath(this.files.root, site);
    return this.write(site, file, () => this.local.writeOpen(site, rows));
  }

  /** With the credited visits' months fetched first (`creditedVisitFiles`). @throws Error when a row's day is not in `month`, or S3 fails */
  writePayments(site: string, month: string, rows: readonly PaymentTableRow[]): Promise<void> {
    const file = paymentsFilePath(this.files.root, site, month);
    return this.with(site, [file, ...creditedVisitFiles(this.files.root, site, rows)], async () => {
      await this.local.writePayments(site, month, rows);
      await this.files.push(site, file);
    });
  }

  /** @throws Error when a file cannot be read, or S3 fails */
  readMonth(site: string, month: string): Promise<VisitRow[]> {
    const paths = [dictionaryFilePath(this.files.root, site), monthFilePath(this.files.root, site, month)];
    return this.with(site, paths, () => this.local.readMonth(site, month));
  }

  /** The months of the site's listed visit and payment files. */
  async months(site: string): Promise<{ visits: string[]; payments: string[] }> {
    const monthsOf = async (family: string) =>
      (await this.files.listed(site, `${family}/site=${site}/`)).flatMap(
        (rel) => /\/mo=(\d{4}-\d{2})\//.exec(rel)?.[1] ?? [],
      );
    return { visits: await monthsOf('visits'), payments: await monthsOf('payments') };
  }

  writtenThrough(site: string): Promise<string | null> {
    return this.with(site, [statePath(this.files.root, site)], () => this.local.writtenThrough(site));
  }

  async setWrittenThrough(site: string, day: string): Promise<void> {
    await this.local.setWrittenThrough(site, day);
    await this.files.push(site, statePath(this.files.root, site));
  }

  changesSeen(site: string): Promise<number | null> {
    return this.with(site, [changesPath(this.files.root, site)], () => this.local.changesSeen(site));
  }

  async setChangesSeen(site: string, ms: number): Promise<void> {
    await this.local.setChangesSeen(site, ms);
    await this.files.push(site, changesPath(this.files.root, site));
  }

  readPayments(site: string, month: string): Promise<PaymentTableRow[]> {
    return this.with(site, [paymentsFilePath(this.files.root, site, month)], () =>
      this.local.readPayments(site, month),
    );
  }

  paymentsWritten(site: string): Promise<PaymentsWritten | null> {
    return this.with(site, [paymentsStatePath(this.files.root, site)], () => this.local.paymentsWritten(site));
  }

  async setPaymentsWritten(site: string, state: PaymentsWritten): Promise<void> {
    await this.local.setPaymentsWritten(site, state);
    await this.files.push(site, paymentsStatePath(this.files.root, site));
  }

  /** @throws Error when S3 reports a key it could not delete */
  async dropSite(site: string): Promise<void> {
    await this.files.removeSite(site);
    await this.local.dropSite(site);
  }

  /** Closes DuckDB. */
  close(): Promise<void> {
    return this.local.close();
  }
}
