import type { DuckDBConnection } from '@duckdb/node-api';
import { fileVersion } from './file-version.js';
import { distinctIds } from './filter-sql.js';
import { sqlLiteral } from './sql.js';
import { visitorKeySql } from './visitor-key.js';

/**
 * The forms of the visit table's files a reader meets (`docs/data-model.md`, "Versions of the stored data",
 * "Old forms still read"): the current form stores `visitor_key`, each visit's pages once (marked by
 * `DISTINCT_PAGES` in the file's key-value metadata) and its outbound link URLs (`links`); a file written
 * before any of them reads in the current form through `beforeCurrentForm`.
 */

/** The key-value metadata of a file whose `pages` lists hold each page once (`encodeRows`). */
export const DISTINCT_PAGES = { key: 'footfall_pages', value: 'distinct' } as const;

/** What a file holds of the current form. */
interface FileForm {
  key: boolean;
  distinctPages: boolean;
  links: boolean;
}

/**
 * Files whose forms a reader keeps (`FileForms`): a year's range of a site reads 25 files (12 visit months,
 * 12 payments months, the open days), so this holds the ranges of some 40 sites at once, at about 200 bytes a
 * file (its path and three flags).
 */
export const FORMS_KEPT = 1024;

/**
 * The forms of visit and payments files, read from their schema and metadata. Kept per file, for its current
 * version only (its size and modification time, `fileVersion`): the writer replaces a month's file with every
 * write, and a long-running service would otherwise keep a form for each version it ever wrote. At most
 * `FORMS_KEPT` files, the least recently read dropped first.
 */
export class FileForms {
  /** By path, in order of last use (a `Map` keeps insertion order). */
  private readonly known = new Map<string, { version: string; form: Promise<FileForm> }>();

  constructor(private readonly connect: () => Promise<DuckDBConnection>) {}

  /** How many files' forms are kept (at most `FORMS_KEPT`). */
  get size(): number {
    return this.known.size;
  }

  /**
   * The select list of a relation over `files` (visit or payments files, read with `union_by_name`) in the
   * current form whatever theirs: `*` when every file is in it, else `beforeCurrentForm`.
   * @throws Error when a file's schema or metadata cannot be read
   */
  async columns(files: readonly string[]): Promise<string> {
    const forms = await Promise.all(files.map((f) => this.formOf(f)));
    if (forms.every((f) => f.key && f.distinctPages && f.links)) return '*';
    return beforeCurrentForm({
      everyKey: forms.every((f) => f.key),
      someKey: forms.some((f) => f.key),
      distinctPages: forms.every((f) => f.distinctPages),
      someLinks: forms.some((f) => f.links),
    });
  }

  private formOf(file: string): Promise<FileForm> {
    const version = fileVersion(file);
    const kept = this.known.get(file);
    // Read again, or read for the first time: last in the order of use either way.
    this.known.delete(file);
    if (kept?.version === version) {
      this.known.set(file, kept);
      return kept.form;
    }
    const entry = { version, form: this.connect().then((db) => readForm(db, file)) };
    // A failed read is not kept (the file may be readable next time); a newer version's entry stays.
    entry.form.catch(() => {
      if (this.known.get(file) === entry) this.known.delete(file);
    });
    this.known.set(file, entry);
    if (this.known.size > FORMS_KEPT) this.known.delete(this.known.keys().next().value!);
    return entry.form;
  }
}

/** A file's form, from its schema and key-value metadata (two queries). */
async function readForm(db: DuckDBConnection, file: string): Promise<FileForm> {
  const path = sqlLiteral(file);
  const [schema] = (
    await db.runAndReadAll(
      `SELECT count(*) FILTER (WHERE name = 'visitor_key'), count(*) FILTER (WHERE name = 'links') ` +
        `FROM parquet_schema(${path})`,
    )
  ).getRowsJS();
  const [mark] = (
    await db.runAndReadAll(
      `SELECT count(*) FROM parquet_kv_metadata(${path}) ` +
        `WHERE decode(key) = '${DISTINCT_PAGES.key}' AND decode(value) = '${DISTINCT_PAGES.value}'`,
    )
  ).getRowsJS();
  const some = (n: unknown) => Number(n ?? 0) > 0;
  return { key: some(schema?.[0]), links: some(schema?.[1]), distinctPages: some(mark?.[0]) };
}

/**
 * The reader of files written before the current form: without `visitor_key`, the key computed in SQL from
 * `visitor_id` (`visitorKeySql`), in place of the column where some files of the relation have it
 * (`union_by_name` reads it as NULL from the others) and as a new column where none has; where every file has
 * it, the column as it is (the writer stores it for every visit), so a relation whose files lack only a later
 * part of the form (`links`) does not read `visitor_id`, the widest column, to compute keys it never uses; with pages not
 * marked distinct, each visit's pages once, in the order first viewed (`distinctIds`, which leaves a list
 * already distinct as it is); without `links`, no link URL (the file kept none: such a file's visits count
 * in every report but the goals report's rows by link URL, until the writer writes the site's table again,
 * `TABLE_ROW_FORM`): NULL, as the writer writes a visit without a click, which `union_by_name` gives already
 * where some files of the relation have the column, and a new column where none has.
 * @param forms `everyKey` and `someKey`: whether every and whether any file of the relation has `visitor_key`;
 *   `distinctPages`: whether every
 *   file's pages are distinct; `someLinks`: whether any file has `links`
 */
export function beforeCurrentForm(forms: {
  everyKey: boolean;
  someKey: boolean;
  distinctPages: boolean;
  someLinks: boolean;
}): string {
  const key = visitorKeySql('visitor_id');
  const replaced = [
    ...(forms.someKey && !forms.everyKey ? [`coalesce(visitor_key, ${key}) AS visitor_key`] : []),
    ...(forms.distinctPages ? [] : [`${distinctIds('pages')} AS pages`]),
  ];
  const added = [
    ...(forms.someKey ? [] : [`${key} AS visitor_key`]),
    ...(forms.someLinks ? [] : ['NULL::UINTEGER[] AS links']),
  ];
  return `*${replaced.length > 0 ? ` REPLACE (${replaced.join(', ')})` : ''}${added.map((c) => `, ${c}`).join('')}`;
}
