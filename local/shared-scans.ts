import type { DuckDBConnection } from '@duckdb/node-api';

/** The temporary tables of one filter and range's matching visits (`v`) and credited payments (`p`). */
export interface SharedTables {
  v: string;
  p: string;
}

/** How to make a key's tables: the selects of its visits and payments (only the columns the panels read). */
export interface SharedScanSource {
  /** A query whose one value is the number of rows the range's visit files hold: at most the matching visits. */
  rows: string;
  visits: string;
  payments: string;
}

/**
 * Within a load, the result of a computation named `name`, computed by the first request of the load that asks
 * for it and shared with the others that ask while it runs (the totals' distinct visitors, which the goals
 * report asks as well).
 */
export type LoadOnce = <T>(name: string, compute: () => Promise<T>) => Promise<T>;

/** What the requests of a load that run at once share beside the tables of its matching rows. */
export interface LoadWork {
  once: LoadOnce;
  /**
   * The name of a temporary table holding the rows of `select`, made by the first request of the load that asks
   * for it (`select` names it) and dropped with the load's tables.
   */
  table(select: string): Promise<string>;
}

/**
 * Whether an error is DuckDB out of room for the tables (its "Out of Memory Error"): the tables are then not
 * kept, and each request scans alone.
 */
const outOfMemory = (error: unknown) => error instanceof Error && /Out of Memory/i.test(error.message);

/**
 * The matching visits and credited payments of a filter and range, scanned once into temporary tables while
 * requests for the same key run at once (the panels of a dashboard load reach the engine together), then
 * dropped when the last of them ends: the range is read and the filter evaluated once for the load, not once
 * per panel (`docs/data-model.md`, "Filtered reports"). Nothing is kept between loads, so a rewritten
 * file is read again by the next one; the key names the files' versions as well. The tables live in the
 * engine's DuckDB, held in memory up to its `memory_limit` and spilled to its `temp_directory` past it
 * (`FilteredRelations`).
 */
export class SharedScans {
  private readonly entries = new Map<
    string,
    {
      ready: Promise<SharedTables | null>;
      users: number;
      results: Map<string, Promise<unknown>>;
      /** The load's other tables (`LoadWork.table`), dropped with it. */
      tables: string[];
    }
  >();
  private made = 0;

  /**
   * @param db the connection whose temporary tables these are (the engine's one connection)
   * @param maxRows the rows of a range's visit files above which its tables are not made (each request scans
   * alone): DuckDB does not hold offloaded temporary tables to its `max_temp_directory_size`, so the bound on
   * memory and disk is this count of rows, from the measured bytes a matching visit takes
   */
  constructor(
    private readonly db: () => Promise<DuckDBConnection>,
    private readonly maxRows: number,
  ) {}

  /**
   * Runs `run` with the key's tables, made by the first request of the key still running, or with null when
   * there is no `source` (the load's filter is not worth copying), the range's files hold more than `maxRows`
   * rows or DuckDB had no room left for them; and with the load's `LoadWork`, whose results and tables live as
   * long as the tables.
   * @throws what making the tables (but running out of room) or `run` throws
   */
  async with<T>(
    key: string,
    source: SharedScanSource | null,
    run: (tables: SharedTables | null, work: LoadWork) => Promise<T>,
  ): Promise<T> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { ready: source ? this.make(source) : Promise.resolve(null), users: 0, results: new Map(), tables: [] };
      this.entries.set(key, entry);
    }
    entry.users += 1;
    const { results, tables: made } = entry;
    const once: LoadOnce = <R>(name: string, compute: () => Promise<R>) => {
      let result = results.get(name) as Promise<R> | undefined;
      if (!result) {
        result = compute();
        results.set(name, result);
      }
      return result;
    };
    const table = (select: string) =>
      once(`table\n${select}`, async () => {
        const name = `load_${++this.made}`;
        made.push(name);
        await (await this.db()).run(`CREATE TEMP TABLE ${name} AS ${select}`);
        return name;
      });
    try {
      return await run(await entry.ready, { once, table });
    } finally {
      entry.users -= 1;
      if (entry.users === 0) {
        this.entries.delete(key);
        await this.drop(entry.ready, made);
      }
    }
  }

  private async make(source: SharedScanSource): Promise<SharedTables | null> {
    const db = await this.db();
    const rows = Number((await db.runAndReadAll(source.rows)).getRowsJS()[0]?.[0] ?? 0);
    if (rows > this.maxRows) return null;
    this.made += 1;
    const tables = { v: `shared_v_${this.made}`, p: `shared_p_${this.made}` };
    try {
      await db.run(`CREATE TEMP TABLE ${tables.v} AS ${source.visits}`);
      await db.run(`CREATE TEMP TABLE ${tables.p} AS ${source.payments}`);
    } catch (error) {
      await db.run(`DROP TABLE IF EXISTS ${tables.v}; DROP TABLE IF EXISTS ${tables.p}`);
      if (outOfMemory(error)) return null;
      throw error;
    }
    return tables;
  }

  private async drop(ready: Promise<SharedTables | null>, others: readonly string[]): Promise<void> {
    const tables = await ready.catch(() => null);
    const names = [...(tables ? [tables.v, tables.p] : []), ...others];
    if (names.length === 0) return;
    const db = await this.db();
    await db.run(names.map((name) => `DROP TABLE IF EXISTS ${name}`).join('; '));
  }
}
