import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DuckDBInstance, timestampValue, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { LocalStreamRecord } from '../lambdas/adapters/local-stream.js';
import { archiveDt, duckdbColumnType } from '../lambdas/domain/archive-schema.js';
import {
  TRACKED_EVENT_COLUMNS,
  trackedEventSchema,
  type ColumnType,
  type TrackedEvent,
} from '../lambdas/domain/tracked-event.js';
import { sqlIdentifier, sqlLiteral } from './sql.js';

/**
 * The local stand-in for Firehose → S3 Parquet (`docs/architecture.md` "Local mode"): writes each
 * batch of events the archive's delivery took (`local/archive-delivery.ts`, deaggregated) as
 * Parquet files in the Glue table's layout and schema,
 * `<archive>/site=<domain>/dt=<YYYY-MM-DD>/part-<batch name>.parquet`.
 */

/** A record the archive could not take; it is skipped so that it never blocks the stream. */
export interface SkippedRecord {
  sequenceNumber: string;
  reason: string;
}

export interface ArchiveConsumerOptions {
  /** Called once per skipped record; by default a one-line warning on stderr. */
  onSkip?: (skipped: SkippedRecord) => void;
  /** Called before each file is written with its key under the archive root (`site=<d>/dt=<day>/part-<n>.parquet`); a throw fails the batch. */
  beforeWrite?: (key: string) => void;
}

/**
 * The consumer, plus counters and `close()`. `name` names the batch's files (`part-<name>.parquet`);
 * by default its first sequence number.
 */
export type ArchiveConsumer = ((records: LocalStreamRecord[], name?: string) => Promise<string | null>) & {
  /** Records skipped so far (bad JSON, not a tracked event, or not archivable). */
  readonly skipped: number;
  /** Rows written so far (a re-delivered batch counts again: its files are rewritten). */
  readonly written: number;
  /** Waits for a write in progress and closes DuckDB. A later batch opens it again. */
  close(): Promise<void>;
};

const STAGING = 'archive_batch';
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * Creates the archive writer of the archive delivery's poller (`LocalArchiveDeliveryPoller`).
 *
 * Each record's data is parsed with `trackedEventSchema`; a record that fails
 * (or whose site is not a safe directory name, or a value that does not fit its
 * column) is skipped, counted and reported to `onSkip`, never retried. The rest
 * is grouped by (site, dt) and each group written as one Parquet file (ZSTD),
 * named after the batch (its `name`, by default its first sequence number). A
 * file is written under a temp name, fsync'ed and renamed, so readers never see
 * a partial file, and a batch delivered again (at least once) rewrites the same
 * names with the same rows instead of adding duplicates: the delivery names a
 * batch by its content (`LocalArchiveDelivery`).
 *
 * @param archiveDir the archive root (`localPaths(dataDir).archive`), created as needed
 * @returns a consumer that resolves null, or throws when a file cannot be written (the poller then retries the batch)
 */
export function createArchiveConsumer(archiveDir: string, options: ArchiveConsumerOptions = {}): ArchiveConsumer {
  const root = resolve(archiveDir);
  const onSkip =
    options.onSkip ?? ((s: SkippedRecord) => console.warn(`archive: skipped record ${s.sequenceNumber}: ${s.reason}`));
  let db: Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let skipped = 0;
  let written = 0;

  const connect = () => {
    db ??= (async () => {
      const instance = await DuckDBInstance.create(':memory:');
      return { instance, connection: await instance.connect() };
    })().catch((error: unknown) => {
      db = undefined;
      throw error;
    });
    return db;
  };

  const consumeNow = async (records: LocalStreamRecord[], name?: string): Promise<string | null> => {
    const first = records[0];
    if (!first) return null;
    const groups = new Map<string, { site: string; dt: string; events: TrackedEvent[] }>();
    for (const record of records) {
      const parsed = parseRecord(record);
      if (typeof parsed === 'string') {
        skipped++;
        onSkip({ sequenceNumber: record.sequenceNumber, reason: parsed });
        continue;
      }
      const key = `${parsed.site}\n${parsed.dt}`;
      const group = groups.get(key) ?? { site: parsed.site, dt: parsed.dt, events: [] };
      group.events.push(parsed.event);
      groups.set(key, group);
    }
    if (groups.size === 0) return null;
    const { connection } = await connect();
    for (const group of groups.values()) {
      const [site, dt, file] = [`site=${group.site}`, `dt=${group.dt}`, `part-${name ?? first.sequenceNumber}.parquet`];
      options.beforeWrite?.(`${site}/${dt}/${file}`);
      await writeParquet(connection, join(root, site, dt), file, group.events);
      written += group.events.length;
    }
    return null;
  };

  // One DuckDB connection and one staging table: batches are written one at a time.
  const consume = (records: LocalStreamRecord[], name?: string): Promise<string | null> => {
    const run = queue.then(() => consumeNow(records, name));
    queue = run.catch(() => undefined);
    return run;
  };

  return Object.defineProperties(consume, {
    skipped: { get: () => skipped },
    written: { get: () => written },
    close: {
      value: async () => {
        await queue;
        const current = db;
        db = undefined;
        if (!current) return;
        const { instance, connection } = await current.catch(() => ({ instance: undefined, connection: undefined }));
        connection?.closeSync();
        instance?.closeSync();
      },
    },
  }) as ArchiveConsumer;
}

/** The event, its partition, or why the record cannot be archived. */
function parseRecord(record: LocalStreamRecord): { event: TrackedEvent; site: string; dt: string } | string {
  let json: unknown;
  try {
    json = JSON.parse(record.data.toString('utf8'));
  } catch {
    return 'data is not JSON';
  }
  const result = trackedEventSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    return `not a tracked event (${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'})`;
  }
  const event = result.data;
  if (!isSafeDirName(event.site)) return `site ${JSON.stringify(event.site)} is not a safe partition name`;
  for (const { name, type } of TRACKED_EVENT_COLUMNS) {
    if (!fitsColumn(event[name], type)) return `${name} does not fit a ${type} column`;
  }
  return { event, site: event.site, dt: archiveDt(event.ts) };
}

/**
 * Sites are validated lowercase DNS names before they reach the stream, but the
 * partition is a directory: refuse anything that could leave it or confuse the
 * `key=value` layout.
 */
function isSafeDirName(site: string): boolean {
  return site.length > 0 && site !== '.' && site !== '..' && !/[/\\=\p{Cc}]/u.test(site);
}

/** Whether a value the schema accepted also fits the archive column (e.g. an int beyond 32 bits would not). */
function fitsColumn(value: unknown, type: ColumnType): boolean {
  if (value === null) return true;
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'int':
      return Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX;
    case 'bigint':
      return Number.isSafeInteger(value);
    case 'timestamp':
      try {
        archiveDt(value as number);
        return true;
      } catch {
        return false;
      }
  }
}

function appendValue(appender: DuckDBAppender, value: unknown, type: ColumnType): void {
  if (value === null || value === undefined) return appender.appendNull();
  switch (type) {
    case 'string':
      return appender.appendVarchar(value as string);
    case 'int':
      return appender.appendInteger(value as number);
    case 'bigint':
      return appender.appendBigInt(BigInt(value as number));
    case 'timestamp':
      // Epoch ms → DuckDB TIMESTAMP (µs since epoch, naive UTC).
      return appender.appendTimestamp(timestampValue(BigInt(value as number) * 1000n));
  }
}

let tempCounter = 0;

/**
 * Writes `events` as `<dir>/<fileName>`: staged in a DuckDB temp table through an
 * appender (typed values, no text round trip), copied to a temp file, fsync'ed,
 * then renamed over the final name (atomic on one filesystem).
 */
async function writeParquet(
  connection: DuckDBConnection,
  dir: string,
  fileName: string,
  events: TrackedEvent[],
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const definitions = TRACKED_EVENT_COLUMNS.map((c) => `${sqlIdentifier(c.name)} ${duckdbColumnType(c.type)}`);
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${STAGING} (${definitions.join(', ')})`);
  const appender = await connection.createAppender(STAGING, 'main', 'temp');
  try {
    for (const event of events) {
      for (const { name, type } of TRACKED_EVENT_COLUMNS) appendValue(appender, event[name], type);
      appender.endRow();
    }
  } finally {
    appender.closeSync(); // flushes the rows
  }
  // The schema promises ms timestamps: write Parquet TIMESTAMP(MILLIS), which DuckDB and Athena read back as timestamp.
  const select = TRACKED_EVENT_COLUMNS.map((c) =>
    c.type === 'timestamp'
      ? `CAST(${sqlIdentifier(c.name)} AS TIMESTAMP_MS) AS ${sqlIdentifier(c.name)}`
      : sqlIdentifier(c.name),
  );
  const final = join(dir, fileName);
  // Hidden and not ending in .parquet, so the `**/*.parquet` glob of readers never matches it.
  const temp = join(dir, `.${fileName}.${process.pid}.${++tempCounter}.tmp`);
  try {
    await connection.run(
      `COPY (SELECT ${select.join(', ')} FROM temp.main.${STAGING}) TO ${sqlLiteral(temp)} (FORMAT PARQUET, COMPRESSION ZSTD)`,
    );
    await fsyncPath(temp);
    await rename(temp, final);
    await fsyncPath(dir); // the rename itself survives a power cut once the directory is synced
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    await connection.run(`DROP TABLE IF EXISTS temp.main.${STAGING}`);
  }
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
