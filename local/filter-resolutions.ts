import { existsSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import { filterSql, resolutionQuery, type ResolvedCondition, type ResolvedConditions } from './filter-sql.js';
import { dictionaryFilePath } from './visit-table.js';
import { sqlLiteral } from './sql.js';
import { fileVersion } from './file-version.js';

/** The relation `dict` of a site: its dictionary file, or an empty relation when none was written. */
export function dictRelation(root: string, site: string): string {
  const dictFile = dictionaryFilePath(root, site);
  return existsSync(dictFile)
    ? `SELECT dictionary, value, id FROM read_parquet(${sqlLiteral(dictFile)})`
    : `SELECT NULL::VARCHAR AS dictionary, NULL::VARCHAR AS value, NULL::UINTEGER AS id WHERE false`;
}

/**
 * The filter conditions of the local filtered engine resolved against a site's dictionary (`dict`):
 * a condition on a one-id column becomes the ids it matches, constants the Parquet reader skips row
 * groups by. Kept per dictionary file version and filter, for the requests of a load.
 */
export class FilterResolutions {
  private readonly resolutions = new Map<string, Promise<ResolvedCondition[]>>();

  /**
   * @param root the visit table's directory (`LocalVisitTable`'s)
   * @param connect the engine's DuckDB connection
   */
  constructor(
    private readonly root: string,
    private readonly connect: () => Promise<DuckDBConnection>,
  ) {}

  /**
   * The filter as SQL (`filterSql`), its conditions on one-id columns resolved against the site's dictionary
   * first, so their ids are constants the Parquet reader skips row groups by. Resolutions are kept per
   * dictionary file version (its size and modification time) and filter, for the requests of a load.
   */
  async where(site: string, filter: Filter): Promise<string> {
    const query = resolutionQuery(filter);
    if (query === null) return filterSql(filter, new Map());
    const dictFile = dictionaryFilePath(this.root, site);
    const key = `${site}\n${fileVersion(dictFile)}\n${JSON.stringify(filter)}`;
    let resolving = this.resolutions.get(key);
    if (!resolving) {
      resolving = this.connect()
        .then((db) => db.runAndReadAll(`WITH dict AS (${dictRelation(this.root, site)}) ${query.sql}`))
        .then((reader) => {
          const rows = new Map(reader.getRowObjectsJS().map((r) => [Number(r.n), r]));
          return query.conditions.map((_, n): ResolvedCondition => {
            const r = rows.get(n);
            return {
              ids: ((r?.ids as unknown[] | null) ?? []).map(Number),
              empty: r?.empty === true,
              most: r?.most === true,
            };
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
    return filterSql(filter, resolved);
  }
}

/** Filter resolutions an engine keeps (`where`). */
const RESOLUTIONS_KEPT = 16;
