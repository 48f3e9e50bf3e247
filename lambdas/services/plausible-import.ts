import { parse } from 'csv-parse/sync';
import { dict } from '../domain/dict.js';
import { ImportedAggregate, type ImportState, type ImportedPeriod } from '../domain/imported/aggregate.js';
import {
  PlausibleRowError,
  plausibleRow,
  plausibleTableOf,
  type PlausibleTable,
} from '../domain/imported/plausible.js';
import { isValidDay } from '../domain/range.js';
import { namespaceOf, type SiteConfig } from '../domain/site.js';

/** Invalid rows listed in the summary; the rest are only counted. */
const MAX_LISTED_ERRORS = 20;

/** What the import writes to and reads from (`DynamoImportedStore`). */
export interface ImportedStorePort {
  replace(domain: string, periods: readonly ImportedPeriod[], state: ImportState): Promise<number>;
  remove(domain: string): Promise<number>;
  firstTrackedDay(namespace: string): Promise<string | null>;
}

/** A refused import: a bad cut-over day, an export without a usable row. The CLI shows it as a usage error. */
export class PlausibleImportError extends Error {}

/** One file of the export as read: its rows, those kept, those skipped (on or after the cut-over day) and invalid. */
export interface PlausibleFileSummary {
  file: string;
  table: PlausibleTable;
  read: number;
  kept: number;
  skipped: number;
  invalid: number;
}

export interface PlausibleImportSummary {
  site: string;
  until: string;
  /** The imported days (site-local, inclusive): the first and last day of a kept row. */
  from: string;
  to: string;
  files: PlausibleFileSummary[];
  /** Files of the zip that are no table of the export. */
  ignored: string[];
  rows: { read: number; kept: number; skipped: number; invalid: number };
  /** The first invalid rows, `<file>:<line>: <column>: <reason>`. */
  errors: string[];
  items: number;
}

/**
 * The rows of one CSV file as records keyed by its header (null-prototype: the header is the file's text).
 * Quoting as RFC 4180 (csv-parse, MIT); a byte-order mark is dropped.
 */
function records(text: string): { header: string[]; rows: string[][] } {
  const all = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
  return { header: all[0] ?? [], rows: all.slice(1) };
}

/**
 * `footfall import plausible` (`docs/ingestion.md`, "Importing a Plausible export"): every row of every
 * table of the export (`files`: the zip's entries, name and text) validated, those of days before `until`
 * (the cut-over day, site-local) summed into daily and monthly aggregates, which replace the site's
 * previous import in one step (`ImportedStorePort.replace`: a rerun writes the same items).
 * @throws PlausibleImportError when `until` is not a day, is after the site's first tracked day (that day
 *   would count twice), or no row is kept
 */
export async function importPlausible(
  store: ImportedStorePort,
  site: SiteConfig,
  files: ReadonlyArray<{ name: string; text: string }>,
  until: string,
  now: number,
): Promise<PlausibleImportSummary> {
  if (!isValidDay(until)) throw new PlausibleImportError(`--until: not a day YYYY-MM-DD: ${until}`);
  const tracked = await store.firstTrackedDay(namespaceOf(site));
  if (tracked !== null && until > tracked)
    throw new PlausibleImportError(
      `--until: ${site.domain} has tracked visits from ${tracked}: the cut-over day must be ${tracked} or earlier, so that no day is counted twice`,
    );
  const aggregate = new ImportedAggregate();
  const summaries: PlausibleFileSummary[] = [];
  const ignored: string[] = [];
  const errors: string[] = [];
  for (const { name, text } of files) {
    const table = plausibleTableOf(name);
    if (!table) {
      if (!name.endsWith('/')) ignored.push(name);
      continue;
    }
    const summary: PlausibleFileSummary = { file: name, table, read: 0, kept: 0, skipped: 0, invalid: 0 };
    summaries.push(summary);
    const { header, rows } = records(text);
    rows.forEach((cells, i) => {
      summary.read++;
      try {
        const row = plausibleRow(table, dict(header.map((column, c) => [column, cells[c] ?? ''] as const)));
        if (row.day >= until) {
          summary.skipped++;
          return;
        }
        aggregate.add(row.day, row.cells);
        summary.kept++;
      } catch (error) {
        if (!(error instanceof PlausibleRowError)) throw error;
        summary.invalid++;
        // Line numbers count the header as line 1.
        if (errors.length < MAX_LISTED_ERRORS) errors.push(`${name}:${i + 2}: ${error.message}`);
      }
    });
  }
  const span = aggregate.span();
  if (!span)
    throw new PlausibleImportError(
      summaries.length === 0
        ? 'the zip holds no imported_*.csv file of a Plausible export'
        : `no row of the export is before --until ${until}`,
    );
  const rows = { read: 0, kept: 0, skipped: 0, invalid: 0 };
  for (const s of summaries) {
    rows.read += s.read;
    rows.kept += s.kept;
    rows.skipped += s.skipped;
    rows.invalid += s.invalid;
  }
  const state: ImportState = {
    source: 'plausible',
    from: span.from,
    to: span.to,
    until,
    imported_at: now,
    files: summaries
      .slice(0, 20)
      .map(({ file, read, kept, skipped }) => ({ file: file.slice(0, 200), read, kept, skipped })),
  };
  const items = await store.replace(site.domain, aggregate.all(), state);
  return { site: site.domain, until, from: span.from, to: span.to, files: summaries, ignored, rows, errors, items };
}
