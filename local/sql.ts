import { join, resolve } from 'node:path';
import {
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  type Json,
  doubleFromDecimalValue,
  type DuckDBConnection,
  type DuckDBValueConverter,
} from '@duckdb/node-api';
import { ARCHIVE_PARTITION_KEYS, archiveTableColumns, duckdbColumnType } from '../lambdas/domain/archive-schema.js';

/**
 * `footfall sql`: DuckDB in memory over the local Parquet archive, standing in
 * for Athena over the Glue table (`docs/architecture.md` "Local mode"). It only reads files,
 * so it works whether or not `footfall serve` is running.
 */

/** The query failed in DuckDB (syntax, unknown column, type error, …); `message` is DuckDB's. */
export class SqlError extends Error {
  override readonly name = 'SqlError';
}

/** A query's result: column names in order, and rows of JSON-friendly values (see `runSql`). */
export interface SqlResult {
  columns: string[];
  rows: unknown[][];
}

/** A SQL string literal: `it's` → `'it''s'`. */
export const sqlLiteral = (value: string): string => `'${value.replaceAll("'", "''")}'`;

/** A SQL quoted identifier: `a"b` → `"a""b"`. */
export const sqlIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Glob of every archive file. Temp files of a write in progress end in `.tmp`, so readers never see them. */
export const archiveGlob = (archiveDir: string): string => join(resolve(archiveDir), '**', '*.parquet');

/**
 * Runs `query` against a view `events` over every Parquet file of the archive
 * (`<archiveDir>/site=…/dt=…/*.parquet`): the archive's columns in schema order,
 * then `site` and `dt` (VARCHAR, from the path). With no files yet, `events`
 * still exists with the same columns and no rows.
 *
 * Values come back JSON-friendly: integers as numbers (as strings beyond
 * ±2^53), DECIMAL as numbers up to 15 digits, timestamps as RFC 3339 UTC
 * strings (`2026-01-14T23:59:59.999Z`, more fraction digits only when present),
 * dates as `YYYY-MM-DD`, lists/structs as arrays/objects.
 *
 * @param archiveDir the archive root, `<data>/archive`; need not exist
 * @param query DuckDB SQL; with several statements, the last one's result
 * @throws SqlError with DuckDB's message when the query fails
 */
export async function runSql(archiveDir: string, query: string): Promise<SqlResult> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await createEventsView(connection, archiveDir);
    let reader;
    try {
      reader = await connection.runAndReadAll(query);
    } catch (error) {
      throw new SqlError((error as Error).message, { cause: error });
    }
    return { columns: reader.columnNames(), rows: reader.convertRows(jsonFriendly) };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Runs `query` as `runSql` does, over the same `events` view, and hands its rows over in pages of up
 * to `pageRows`, converted as `runSql` converts them: one scan of the files however many pages,
 * where a query per page (`LIMIT … OFFSET …`) would read and sort them again for each. The result is
 * whole in DuckDB (columnar) before this resolves, so a failed query is known before a page is taken;
 * rows become JavaScript values one page at a time. DuckDB closes after the last page, or when the
 * caller stops iterating.
 * @throws SqlError with DuckDB's message when the query fails
 */
export async function runSqlPages(
  archiveDir: string,
  query: string,
  pageRows: number,
): Promise<{ columns: string[]; pages: AsyncIterable<unknown[][]> }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const close = () => {
    connection.closeSync();
    instance.closeSync();
  };
  let result;
  try {
    await createEventsView(connection, archiveDir);
    result = await connection.run(query);
  } catch (error) {
    close();
    throw error instanceof SqlError ? error : new SqlError((error as Error).message, { cause: error });
  }
  const done = result;
  return {
    columns: done.columnNames(),
    pages: (async function* pages() {
      try {
        let page: unknown[][] = [];
        for (let i = 0; i < done.chunkCount; i++) {
          page.push(...done.getChunk(i).convertRows(jsonFriendly));
          if (page.length >= pageRows) {
            yield page;
            page = [];
          }
        }
        if (page.length > 0) yield page;
      } finally {
        close();
      }
    })(),
  };
}

async function createEventsView(connection: DuckDBConnection, archiveDir: string): Promise<void> {
  const glob = sqlLiteral(archiveGlob(archiveDir));
  const files = await connection.runAndReadAll(`SELECT count(*) FROM glob(${glob})`);
  const columns = archiveTableColumns();
  if (files.getRows()[0]?.[0] === 0n) {
    // read_parquet fails on a glob without matches; an empty archive is still a table.
    const nulls = columns.map((c) => `CAST(NULL AS ${duckdbColumnType(c.type)}) AS ${sqlIdentifier(c.name)}`);
    await connection.run(`CREATE VIEW events AS SELECT ${nulls.join(', ')} WHERE false`);
    return;
  }
  // Partition values are strings, as in the Glue table: without hive_types DuckDB
  // would turn dt into a DATE, and `dt BETWEEN '…' AND '…'` would mean something else.
  const hiveTypes = ARCHIVE_PARTITION_KEYS.map((k) => `${sqlLiteral(k.name)}: ${duckdbColumnType(k.type)}`).join(', ');
  const source = `read_parquet(${glob}, hive_partitioning = true, union_by_name = true, hive_types = {${hiveTypes}})`;
  const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
  const present = new Set(described.getRows().map((row) => String(row[0])));
  // Select the schema's columns explicitly, with the schema's types: a column added
  // to the schema after older files were written reads as NULL in those (and in all,
  // until the first file has it), and a column dropped from the schema disappears.
  const select = columns.map((c) => {
    const type = duckdbColumnType(c.type);
    const id = sqlIdentifier(c.name);
    return present.has(c.name) ? `CAST(${id} AS ${type}) AS ${id}` : `CAST(NULL AS ${type}) AS ${id}`;
  });
  await connection.run(`CREATE VIEW events AS SELECT ${select.join(', ')} FROM ${source}`);
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** RFC 3339 UTC from an integer count of `1/perSecond` seconds, keeping sub-millisecond digits only when non-zero. */
function isoFrom(units: bigint, perSecond: bigint): string {
  const perMs = perSecond / 1000n;
  if (perMs === 0n) return new Date(Number(units * 1000n)).toISOString();
  let ms = units / perMs;
  if (units < 0n && ms * perMs !== units) ms -= 1n; // floor, not truncation, before 1970
  const sub = units - ms * perMs;
  const iso = new Date(Number(ms)).toISOString();
  if (sub === 0n) return iso;
  const digits = String(perMs).length - 1;
  return `${iso.slice(0, -1)}${String(sub).padStart(digits, '0').replace(/0+$/, '')}Z`;
}

function timestampToJson(value: unknown): string {
  try {
    if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue)
      return isoFrom(value.micros, 1_000_000n);
    if (value instanceof DuckDBTimestampMillisecondsValue) return isoFrom(value.millis, 1_000n);
    if (value instanceof DuckDBTimestampSecondsValue) return isoFrom(value.seconds, 1n);
    if (value instanceof DuckDBTimestampNanosecondsValue) return isoFrom(value.nanos, 1_000_000_000n);
  } catch {
    // ±infinity and years beyond JS Dates: DuckDB's own spelling.
  }
  return String(value);
}

/** DuckDB's JSON converter, with numbers instead of strings where that is lossless, and RFC 3339 timestamps. */
const jsonFriendly: DuckDBValueConverter<unknown> = (value, type, converter) => {
  if (value === null) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM: {
      const n = value as bigint;
      return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n.toString();
    }
    case DuckDBTypeId.DECIMAL:
      return value instanceof DuckDBDecimalValue && value.width <= 15 ? doubleFromDecimalValue(value) : String(value);
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_NS:
      return timestampToJson(value);
    default:
      // Nested values (lists, structs, maps) recurse through `converter`, i.e. back into this function.
      return JsonDuckDBValueConverter(value, type, converter as DuckDBValueConverter<Json>);
  }
};
