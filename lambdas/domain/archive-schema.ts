import { TRACKED_EVENT_COLUMNS, trackedEventSchema, type ColumnType, type TrackedEvent } from './tracked-event.js';
import { dict } from './dict.js';

/**
 * The raw event archive's table, derived from `TRACKED_EVENT_COLUMNS` (the one
 * schema definition): the Glue table (AWS), the local Parquet writer and
 * `docs/sql.md` all read it from here, so there is no second column list.
 */

/** A column of the archive table with its Glue/Hive type. */
export interface ArchiveColumn {
  name: string;
  type: ColumnType;
}

/** Key prefix of the Parquet events in the archive bucket: `events/site=<domain>/dt=<YYYY-MM-DD>/`. */
export const EVENTS_PREFIX = 'events/';

/**
 * Partition columns, in path order: `site=<domain>/dt=<YYYY-MM-DD>`. They live
 * in the object key / directory name, not inside the Parquet files. `dt` is the
 * UTC date of the event's `ts` (not the site's local day).
 */
export const ARCHIVE_PARTITION_KEYS: ReadonlyArray<{ name: 'site' | 'dt'; type: 'string' }> = [
  { name: 'site', type: 'string' },
  { name: 'dt', type: 'string' },
];

/** The last millisecond whose ISO date has a 4-digit year (9999-12-31T23:59:59.999Z). */
const MAX_ARCHIVE_TS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The `dt` partition of an event: the UTC calendar date of `tsMs` as `YYYY-MM-DD`.
 * @param tsMs event time, milliseconds since the Unix epoch
 * @throws RangeError when `tsMs` is not an integer in 1970-01-01 … 9999-12-31
 *   (a 5-digit or negative year would not fit the partition format)
 */
export function archiveDt(tsMs: number): string {
  if (!Number.isInteger(tsMs) || tsMs < 0 || tsMs > MAX_ARCHIVE_TS) {
    throw new RangeError(`timestamp out of the archive's range: ${tsMs}`);
  }
  return new Date(tsMs).toISOString().slice(0, 10);
}

const DUCKDB_TYPES: Record<ColumnType, string> = {
  string: 'VARCHAR',
  int: 'INTEGER',
  bigint: 'BIGINT',
  // Naive TIMESTAMP holding UTC, like Athena's `timestamp`; values carry ms precision
  // (the event's `ts` is an epoch-ms number) and are written to Parquet as TIMESTAMP(MILLIS).
  timestamp: 'TIMESTAMP',
};

/** The DuckDB SQL type of an archive column type: string→VARCHAR, int→INTEGER, bigint→BIGINT, timestamp→TIMESTAMP (UTC, ms). */
export function duckdbColumnType(type: ColumnType): string {
  return DUCKDB_TYPES[type];
}

/**
 * The Glue table's (non-partition) columns in file order, with Glue/Hive types
 * (`string`, `int`, `bigint`, `timestamp`), for the CDK `CfnTable` and the
 * Firehose Parquet conversion. Partition keys are `ARCHIVE_PARTITION_KEYS`.
 */
export function glueColumns(): ArchiveColumn[] {
  return TRACKED_EVENT_COLUMNS.map(({ name, type }) => ({ name, type }));
}

/** Every column of the `events` table as queried (file columns, then partition columns). */
export function archiveTableColumns(): ArchiveColumn[] {
  return [...glueColumns(), ...ARCHIVE_PARTITION_KEYS];
}

/**
 * An enriched event from an archive row (DuckDB or Athena): `columns` names
 * the row's values; `ts` comes as an RFC 3339 string or epoch ms, `site` from
 * the partition. Values the engine returns as text are turned back into the
 * schema's types.
 *
 * @throws ZodError when the row is not an event of the schema
 */
export function trackedEventFromRow(columns: readonly string[], row: readonly unknown[]): TrackedEvent {
  const record = dict<unknown>();
  columns.forEach((name, i) => (record[name] = row[i] ?? null));
  const ts = record.ts;
  const text = String(ts);
  // Athena gives "2026-03-05 10:00:00.000" (UTC, no zone); DuckDB through runSql, RFC 3339.
  record.ts =
    typeof ts === 'number' ? ts : Date.parse(/[zZ]$|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
  if (record.screen_width !== null && record.screen_width !== undefined)
    record.screen_width = Number(record.screen_width);
  delete record.dt;
  return trackedEventSchema.parse(record);
}
