import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalStreamRecord } from '../lambdas/adapters/local-stream.js';
import {
  MAX_BYTES_PER_CALL,
  MAX_OBJECTS_PER_RECORD,
  MAX_RECORD_BYTES,
  MAX_RECORDS_PER_CALL,
  jsonLineRecords,
  putRecordBatchCalls,
} from '../lambdas/adapters/firehose-stream.js';
import type { ArchiveDelivery } from '../lambdas/ports.js';

/** A delivered call's file: its records, one base64 line each. */
const BATCH_SUFFIX = '.batch';

/**
 * The local stand-in of the archive's Direct PUT delivery (`docs/ingestion.md`, "Archive packed"):
 * the lines are packed into records and calls exactly as `FirehoseArchiveDelivery` sends them, each
 * call is checked against PutRecordBatch's limits (500 records, 4 MiB, a record 1,000 KiB; Firehose
 * API reference) and kept as one file `<dir>/<SHA-256 of its records>.batch`, fsync'ed and renamed
 * into place, until the archive's poller (`LocalArchiveDeliveryPoller`) converts it. A call named by
 * its content is where the twin is stricter about duplicates than Firehose (at least once): the same
 * object forwarded again (the sessionizer retried after a crash) rewrites the same file, and the
 * archive the same Parquet names, so the local archive holds each event once (`docs/sql.md`).
 */
export class LocalArchiveDelivery implements ArchiveDelivery {
  constructor(private readonly dir: string) {}

  async put(lines: readonly Buffer[]): Promise<void> {
    for (const call of putRecordBatchCalls(jsonLineRecords(lines, MAX_OBJECTS_PER_RECORD)))
      await this.putRecordBatch(call);
  }

  /**
   * One PutRecordBatch call.
   * @throws Error (Firehose's `ValidationException`) when the call breaks PutRecordBatch's limits
   */
  async putRecordBatch(records: readonly Buffer[]): Promise<void> {
    const bytes = records.reduce((sum, r) => sum + r.length, 0);
    if (records.length === 0 || records.length > MAX_RECORDS_PER_CALL || bytes > MAX_BYTES_PER_CALL)
      throw new Error(`ValidationException: PutRecordBatch of ${records.length} records and ${bytes} bytes`);
    if (records.some((r) => r.length > MAX_RECORD_BYTES))
      throw new Error(`ValidationException: a record over ${MAX_RECORD_BYTES} bytes`);
    const hash = createHash('sha256');
    for (const record of records) hash.update(createHash('sha256').update(record).digest());
    const name = hash.digest('hex').slice(0, 32);
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${name}${BATCH_SUFFIX}`);
    const temp = join(this.dir, `.${name}.${process.pid}.tmp`);
    const file = await open(temp, 'w');
    try {
      await file.writeFile(records.map((r) => `${r.toString('base64')}\n`).join(''));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  }
}

/**
 * Firehose's JSON multi-record deaggregation of one record: the consecutive JSON objects it holds,
 * on one line with no delimiter or newline-delimited (`{"a":1}{"a":2}`, `{"a":1}\n{"a":2}`), at most
 * 500 ("Apply dynamic partitioning to aggregated data", Firehose developer guide). Objects are found
 * by their braces (strings and escapes respected), not parsed: a malformed object reaches the
 * conversion as one record and fails there, as in Firehose.
 * @returns the objects, or why the record cannot be deaggregated (Firehose sends it to the error prefix)
 */
export function deaggregateJson(record: Buffer): Buffer[] | string {
  const objects: Buffer[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < record.length; i++) {
    const c = record[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
      continue;
    }
    if (depth === 0) {
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
      if (c !== 0x7b) return `not JSON objects (byte ${i})`;
      start = i;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) objects.push(record.subarray(start, i + 1));
    }
  }
  if (depth !== 0 || inString) return 'a JSON object is cut off';
  if (objects.length > MAX_OBJECTS_PER_RECORD)
    return `${objects.length} JSON objects (at most ${MAX_OBJECTS_PER_RECORD})`;
  return objects;
}

/** What the archive's poller hands the Parquet writer: a delivered call's events, named by the call. */
export type DeliveredBatchConsumer = (records: LocalStreamRecord[], name: string) => Promise<unknown>;

/**
 * The local stand-in of the archive delivery's processing: reads the delivered calls
 * (`LocalArchiveDelivery`) oldest name first, deaggregates each record (`deaggregateJson`) into one
 * record an event, hands them to the Parquet writer under the call's name, then deletes the call. A
 * record that cannot be deaggregated is reported to `onSkip` and left out, as Firehose writes it to
 * its error prefix. A crash before the delete converts the call again into the same files.
 */
export class LocalArchiveDeliveryPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly dir: string,
    private readonly consume: DeliveredBatchConsumer,
    private readonly options: {
      onError?: (error: unknown) => void;
      onSkip?: (skipped: { sequenceNumber: string; reason: string }) => void;
    } = {},
  ) {}

  /** Calls delivered and not yet converted. */
  async pending(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => n.endsWith(BATCH_SUFFIX)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** The events of a delivered call, deaggregated, numbered `<call>-<index>`. */
  async read(file: string): Promise<LocalStreamRecord[]> {
    const name = file.slice(0, -BATCH_SUFFIX.length);
    const text = await readFile(join(this.dir, file), 'utf8');
    const out: LocalStreamRecord[] = [];
    text
      .split('\n')
      .filter(Boolean)
      .forEach((line, index) => {
        const objects = deaggregateJson(Buffer.from(line, 'base64'));
        if (typeof objects === 'string') {
          this.options.onSkip?.({ sequenceNumber: `${name}-r${index}`, reason: objects });
          return;
        }
        for (const data of objects)
          out.push({
            sequenceNumber: `${name}-${out.length}`,
            partitionKey: name,
            approximateArrivalTimestamp: 0,
            data,
          });
      });
    return out;
  }

  /**
   * Converts every call delivered now; returns how many events it handed over. Concurrent calls share one run.
   * @throws what the consumer threw; that call stays for the next run
   */
  drain(): Promise<number> {
    this.running ??= this.drainOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async drainOnce(): Promise<number> {
    let events = 0;
    for (const file of await this.pending()) {
      const records = await this.read(file);
      if (records.length > 0) await this.consume(records, file.slice(0, -BATCH_SUFFIX.length));
      events += records.length;
      await unlink(join(this.dir, file));
    }
    return events;
  }

  /** Polls every `intervalMs` until `stop()`. Errors go to `onError`; the call is converted again next time. */
  start(intervalMs: number): void {
    const tick = async () => {
      try {
        await this.drain();
      } catch (error) {
        this.options.onError?.(error);
      }
      if (this.timer) this.timer = setTimeout(tick, intervalMs);
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  /** Stops polling and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}
