import {
  FirehoseClient,
  PutRecordBatchCommand,
  type FirehoseClientConfig,
  type _Record as FirehoseRecord,
} from '@aws-sdk/client-firehose';
import type { TrackedEvent } from '../domain/tracked-event.js';
import { UnavailableError } from '../domain/errors.js';
import type { EventStream } from '../ports.js';
import { encodeEvent } from './stream-record.js';

/** PutRecordBatch takes at most 500 records and 4 MiB per call; a record is at most 1,000 KiB (Firehose API reference). */
const MAX_RECORDS_PER_CALL = 500;
const MAX_BYTES_PER_CALL = 4 * 1024 * 1024;
const MAX_RECORD_BYTES = 1000 * 1024;

/** The two Direct PUT delivery streams the event function writes (`docs/ingestion.md`, "Choosing the ingestion path"). */
export interface DeliveryStreamNames {
  /** Raw JSON lines to `raw/`, 60 s buffer: what the sessionizer reads. */
  ingest: string;
  /** Parquet, dynamic partitioning by site and day, 15 minutes: the archive. */
  archive: string;
}

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
 * The ingest records of a request's events: their JSON lines (each ending in a newline, so the
 * objects Firehose concatenates them into stay one event a line), packed into as few records of
 * at most 1,000 KiB as they fit. Firehose bills each record in 5 KB increments, so a request's
 * events share them.
 */
export function ingestRecords(events: readonly TrackedEvent[]): Buffer[] {
  const records: Buffer[] = [];
  let parts: Buffer[] = [];
  let size = 0;
  for (const event of events) {
    const line = Buffer.concat([encodeEvent(event), Buffer.from('\n')]);
    if (size + line.length > MAX_RECORD_BYTES && parts.length > 0) {
      records.push(Buffer.concat(parts));
      parts = [];
      size = 0;
    }
    parts.push(line);
    size += line.length;
  }
  if (parts.length > 0) records.push(Buffer.concat(parts));
  return records;
}

/** Splits records into PutRecordBatch calls within its record and byte limits. */
function calls(records: readonly Buffer[]): Buffer[][] {
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

/**
 * The event stream on two Direct PUT Firehose delivery streams: each request's events go to the
 * ingest stream as JSON-lines records and to the archive stream one event a record (its Parquet
 * conversion reads one JSON object a record), both at once. `PutRecordBatch` can partly fail
 * (`FailedPutCount`, throttling): the failed records are sent once more, and if any still fail the
 * put throws `UnavailableError`, so the client gets 503 and retries — never a 202 for an event
 * that either stream did not take. A retried request may leave an event in a stream twice, which
 * the sessionizer absorbs (a visit keeps each event id once) and the archive's readers
 * deduplicate by `event_id`.
 */
export class FirehoseEventStream implements EventStream {
  constructor(
    private readonly client: FirehoseClient,
    private readonly names: DeliveryStreamNames,
  ) {}

  async put(events: readonly TrackedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await Promise.all([
      this.deliver(this.names.ingest, ingestRecords(events)),
      this.deliver(this.names.archive, events.map(encodeEvent)),
    ]);
  }

  private async deliver(stream: string, records: readonly Buffer[]): Promise<void> {
    for (const call of calls(records)) {
      let failed = await this.send(stream, call);
      if (failed.length > 0) failed = await this.send(stream, failed);
      if (failed.length > 0) throw new UnavailableError(`${failed.length} records not written to ${stream}`);
    }
  }

  /** Sends records and returns those Firehose did not accept. */
  private async send(stream: string, records: readonly Buffer[]): Promise<Buffer[]> {
    let result;
    try {
      result = await this.client.send(
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
}
