import type { DuckDBConnection } from '@duckdb/node-api';

/** The temporary tables of one filter and range's matching visits (`v`) and credited payments (`p`). */
export interface SharedTables {
  v: string;
  p: string;
}

/** How to make a key's tables: the query of the rows its files hold, and the selects of its visits and payments. */
export interface SharedScanSource {
  /** A query whose one value is the number of rows the range's visit files hold (the memory bound's measure). */
  rows: string;
  visits: string;
  payments: string;
}

/**
 * Rows of the range's visit files above which the matching visits are not kept (each request scans them
 * itself): about a year at a tenth of the bench site, so the tables stay within some hundreds of MB
 * (`docs/data-model.md`, "Filtered reports").
 */
export const SHARED_MAX_ROWS = 2_000_000;

/**
 * The matching visits and credited payments of a filter and range, scanned once into temporary tables while
 * requests for the same key run at once (the panels of a dashboard load reach the engine together), then
 * dropped when the last of them ends: the range is read and the filter evaluated once for the load, not once
 * per panel (`docs/benchmarks.md`, "Filtered dashboards"). Nothing is kept between loads, so a rewritten
 * file is read again by the next one; the key names the files' versions as well.
 */
export class SharedScans {
  private readonly entries = new Map<string, { ready: Promise<SharedTables | null>; users: number }>();
  private made = 0;

  /** @param db the connection whose temporary tables these are (the engine's one connection) */
  constructor(private readonly db: () => Promise<DuckDBConnection>) {}

  /**
   * Runs `run` with the key's tables, made by the first request of the key still running, or with null when
   * the range's files hold more than `SHARED_MAX_ROWS` rows.
   * @throws what making the tables or `run` throws
   */
  async with<T>(key: string, source: SharedScanSource, run: (tables: SharedTables | null) => Promise<T>): Promise<T> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { ready: this.make(source), users: 0 };
      this.entries.set(key, entry);
    }
    entry.users += 1;
    try {
      return await run(await entry.ready);
    } finally {
      entry.users -= 1;
      if (entry.users === 0) {
        this.entries.delete(key);
        await this.drop(entry.ready);
      }
    }
  }

  private async make(source: SharedScanSource): Promise<SharedTables | null> {
    const db = await this.db();
    const rows = Number((await db.runAndReadAll(source.rows)).getRowsJS()[0]?.[0] ?? 0);
    if (rows > SHARED_MAX_ROWS) return null;
    this.made += 1;
    const tables = { v: `shared_v_${this.made}`, p: `shared_p_${this.made}` };
    try {
      await db.run(`CREATE TEMP TABLE ${tables.v} AS ${source.visits}`);
      await db.run(`CREATE TEMP TABLE ${tables.p} AS ${source.payments}`);
    } catch (error) {
      await db.run(`DROP TABLE IF EXISTS ${tables.v}; DROP TABLE IF EXISTS ${tables.p}`);
      throw error;
    }
    return tables;
  }

  private async drop(ready: Promise<SharedTables | null>): Promise<void> {
    const tables = await ready.catch(() => null);
    if (!tables) return;
    const db = await this.db();
    await db.run(`DROP TABLE IF EXISTS ${tables.v}; DROP TABLE IF EXISTS ${tables.p}`);
  }
}
