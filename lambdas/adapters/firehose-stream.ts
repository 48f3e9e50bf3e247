import {
  FirehoseClient,
  PutRecordBatchCommand,
  type FirehoseClientConfig,
  type _Record as FirehoseRecord,
} from '@aws-sdk/client-firehose';
import type { TrackedEvent } from '../domain/tracked-event.js';
import { UnavailableError } from '../domain/errors.js';
import type { ArchiveDelivery, EventStream } from '../ports.js';
import { encodeEvent } from './stream-record.js';

/** PutRecordBatch takes at most 500 records and 4 MiB per call; a record is at most 1,000 KiB (Firehose API reference). */
export const MAX_RECORDS_PER_CALL = 500;
export const MAX_BYTES_PER_CALL = 4 * 1024 * 1024;
export const MAX_RECORD_BYTES = 1000 * 1024;
/**
 * JSON objects a record may hold for the archive's multi-record deaggregation: "capped at 500 per
 * record" (Firehose developer guide, "Apply dynamic partitioning to aggregated data").
 */
export const MAX_OBJECTS_PER_RECORD = 500;

/** A Firehose client; in Lambda the runtime's SDK (bundles leave `@aws-sdk/*` external). */
export function createFirehoseClient(
  options: { maxAttempts?: number; requestHandler?: FirehoseClientConfig['requestHandler'] } = {},
): FirehoseClient {
  return new FirehoseClient({
    maxAttempts: options.maxAttempts ?? 3,
    ...(options.requestHandler ? { requestHandler: options.requestHandler } : {}),
  });
}

/**
 * Packs JSON lines (without their newline) into as few records as they fit, each at most 1,000 KiB
 * and at most `maxLines` lines, every line ending in a newline (so the objects Firehose
 * concatenates records into stay one JSON object a line). Firehose bills each record in 5 KB
 * increments, so lines that share a record share them. A single line over 1,000 KiB is a record of
 * its own, which Firehose refuses; the event function's lines are far smaller (`docs/ingestion.md`,
 * "Request").
 * @param lines JSON texts, one object each
 * @param maxLines at most this many lines a record (`MAX_OBJECTS_PER_RECORD` for the archive)
 */
export function jsonLineRecords(lines: readonly Buffer[], maxLines = Infinity): Buffer[] {
  const newline = Buffer.from('\n');
  const records: Buffer[] = [];
  let parts: Buffer[] = [];
  let size = 0;
  let count = 0;
  for (const text of lines) {
    const length = text.length + 1;
    if (count > 0 && (size + length > MAX_RECORD_BYTES || count >= maxLines)) {
      records.push(Buffer.concat(parts));
      parts = [];
      size = 0;
      count = 0;
    }
    parts.push(text, newline);
    size += length;
    count++;
  }
  if (parts.length > 0) records.push(Buffer.concat(parts));
  return records;
}

/** The ingest records of a request's events: their JSON lines in as few records of at most 1,000 KiB as fit. */
export function ingestRecords(events: readonly TrackedEvent[]): Buffer[] {
  return jsonLineRecords(events.map(encodeEvent));
}

/** Splits records into PutRecordBatch calls within its record and byte limits. */
export function putRecordBatchCalls(records: readonly Buffer[]): Buffer[][] {
  const out: Buffer[][] = [];
  let call: Buffer[] = [];
  let bytes = 0;
  for (const record of records) {
    if (call.length === MAX_RECORDS_PER_CALL || (bytes + record.length > MAX_BYTES_PER_CALL && call.length > 0)) {
      out.push(call);
      call = [];
      bytes = 0;
    }
    call.push(record);
    bytes += record.length;
  }
  if (call.length > 0) out.push(call);
  return out;
}

/** How often a delivery sends records Firehose refused, and the pause before the n-th resend (ms, doubling). */
interface Retries {
  attempts: number;
  backoffMs: number;
}

/**
 * Puts records to a delivery stream in calls within PutRecordBatch's limits. `PutRecordBatch` can
 * partly fail (`FailedPutCount`, throttling): only the failed records are sent again, up to
 * `attempts` sends in all, so a record Firehose accepted is never sent twice by this function.
 * @throws UnavailableError when a call fails or records still fail after the last attempt
 */
async function deliver(client: FirehoseClient, stream: string, records: readonly Buffer[], retries: Retries) {
  for (const call of putRecordBatchCalls(records)) {
    let failed: readonly Buffer[] = call;
    for (let attempt = 1; attempt <= retries.attempts && failed.length > 0; attempt++) {
      if (attempt > 1 && retries.backoffMs > 0)
        await new Promise((done) => setTimeout(done, retries.backoffMs * 2 ** (attempt - 2)));
      failed = await send(client, stream, failed);
    }
    if (failed.length > 0) throw new UnavailableError(`${failed.length} records not written to ${stream}`);
  }
}

/** Sends records and returns those Firehose did not accept. */
async function send(client: FirehoseClient, stream: string, records: readonly Buffer[]): Promise<Buffer[]> {
  let result;
  try {
    result = await client.send(
      new PutRecordBatchCommand({
        DeliveryStreamName: stream,
        Records: records.map((Data): FirehoseRecord => ({ Data })),
      }),
    );
  } catch (error) {
    throw new UnavailableError(`PutRecordBatch to ${stream} failed`, error);
  }
  if (!result.FailedPutCount) return [];
  return records.filter((_, index) => result.RequestResponses?.[index]?.ErrorCode);
}

/**
 * The event stream on the ingest delivery (Direct PUT → `raw/`, read by the sessionizer, which
 * forwards each object's events to the archive: `FirehoseArchiveDelivery`). A request's events go
 * as JSON-lines records; records that fail are sent once more, and if any still fail the put throws
 * `UnavailableError`, so the client gets 503 and retries — never a 202 for an event the stream did
 * not take. A retried request may leave an event in the stream twice, which the sessionizer absorbs
 * (a visit keeps each event id once) and the archive's readers deduplicate by `event_id`.
 */
export class FirehoseEventStream implements EventStream {
  constructor(
    private readonly client: FirehoseClient,
    private readonly ingest: string,
  ) {}

  async put(events: readonly TrackedEvent[]): Promise<void> {
    if (events.length === 0) return;
    // Sent once more at once: the visitor's request is waiting.
    await deliver(this.client, this.ingest, ingestRecords(events), { attempts: 2, backoffMs: 0 });
  }
}

/**
 * Sends of a refused archive record before the sessionizer gives the object up: 4, 0.1 + 0.2 +
 * 0.4 s apart. Giving up throws and the object is retried whole, which sends again the records
 * accepted before: resending only the refused ones here keeps that rare.
 */
const ARCHIVE_RETRIES: Retries = { attempts: 4, backoffMs: 100 };

/**
 * The archive delivery as the sessionizer writes it (`docs/ingestion.md`, "Archive packed"): a raw
 * object's event lines packed into JSON-lines records of at most 500 lines and 1,000 KiB, which
 * the delivery's JSON multi-record deaggregation splits back into one event each before the
 * partitioning and the Parquet conversion. Firehose bills ingestion and conversion per record in
 * 5 KB increments, so a record of a few hundred events bills about its bytes.
 */
export class FirehoseArchiveDelivery implements ArchiveDelivery {
  constructor(
    private readonly client: FirehoseClient,
    private readonly archive: string,
  ) {}

  /** @throws UnavailableError when records are still refused after `ARCHIVE_RETRIES` */
  async put(lines: readonly Buffer[]): Promise<void> {
    if (lines.length === 0) return;
    await deliver(this.client, this.archive, jsonLineRecords(lines, MAX_OBJECTS_PER_RECORD), ARCHIVE_RETRIES);
  }
}
