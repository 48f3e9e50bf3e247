import type { DuckDBConnection } from '@duckdb/node-api';
import { fileVersion } from './filter-resolutions.js';
import { distinctIds } from './filter-sql.js';
import { sqlLiteral } from './sql.js';
import { visitorKeySql } from './visitor-key.js';

/**
 * The forms of the visit table's files a reader meets (`docs/data-model.md`, "Versions of the stored data",
 * "Old forms still read"): the current form stores `visitor_key` and each visit's pages once (marked by
 * `DISTINCT_PAGES` in the file's key-value metadata); a file written before either reads the same through
 * `beforeCurrentForm`.
 */

/** The key-value metadata of a file whose `pages` lists hold each page once (`encodeRows`). */
export const DISTINCT_PAGES = { key: 'footfall_pages', value: 'distinct' } as const;

/** What a file holds of the current form. */
interface FileForm {
  key: boolean;
  distinctPages: boolean;
}

/** The forms of visit and payments files, read from their schema and metadata, kept per file version. */
export class FileForms {
  private readonly known = new Map<string, Promise<FileForm>>();

  constructor(private readonly connect: () => Promise<DuckDBConnection>) {}

  /**
   * The select list of a relation over `files` (visit or payments files, read with `union_by_name`) in the
   * current form whatever theirs: `*` when every file is in it, else `beforeCurrentForm`.
   * @throws Error when a file's schema or metadata cannot be read
   */
  async columns(files: readonly string[]): Promise<string> {
    const forms = await Promise.all(files.map((f) => this.formOf(f)));
    if (forms.every((f) => f.key && f.distinctPages)) return '*';
    return beforeCurrentForm(
      forms.some((f) => f.key),
      forms.every((f) => f.distinctPages),
    );
  }

  private formOf(file: string): Promise<FileForm> {
    const version = fileVersion(file);
    let known = this.known.get(version);
    if (!known) {
      known = this.connect().then(async (db) => {
        const one = async (sql: string) => Number((await db.runAndReadAll(sql)).getRowsJS()[0]?.[0] ?? 0) > 0;
        const path = sqlLiteral(file);
        return {
          key: await one(`SELECT count(*) FROM parquet_schema(${path}) WHERE name = 'visitor_key'`),
          distinctPages: await one(
            `SELECT count(*) FROM parquet_kv_metadata(${path}) ` +
              `WHERE decode(key) = '${DISTINCT_PAGES.key}' AND decode(value) = '${DISTINCT_PAGES.value}'`,
          ),
        };
      });
      known.catch(() => this.known.delete(version));
      this.known.set(version, known);
    }
    return known;
  }
}

/**
 * The reader of files written before the current form: without `visitor_key`, the key computed in SQL from
 * `visitor_id` (`visitorKeySql`), in place of the column where some files of the relation have it
 * (`union_by_name` reads it as NULL from the others) and as a new column where none has; with pages not
 * marked distinct, each visit's pages once, in the order first viewed (`distinctIds`, which leaves a list
 * already distinct as it is).
 * @param someKey whether any file of the relation has `visitor_key`
 * @param distinctPages whether every file's pages are distinct
 */
export function beforeCurrentForm(someKey: boolean, distinctPages: boolean): string {
  const key = visitorKeySql('visitor_id');
  const replaced = [
    ...(someKey ? [`coalesce(visitor_key, ${key}) AS visitor_key`] : []),
    ...(distinctPages ? [] : [`${distinctIds('pages')} AS pages`]),
  ];
  return `*${replaced.length > 0 ? ` REPLACE (${replaced.join(', ')})` : ''}${someKey ? '' : `, ${key} AS visitor_key`}`;
}
