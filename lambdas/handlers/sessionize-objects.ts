import type { Logger } from '@aws-lambda-powertools/logger';
import type { KinesisStreamBatchResponse, KinesisStreamEvent, S3Event } from 'aws-lambda';
import type { ArchiveDelivery, IngestJournal, RawObjects } from '../ports.js';

/**
 * The shard name of the raw delivery in the sessionizer's checkpoints (rollup log state, batch
 * marker, realtime items): one ordered source, as one Kinesis shard was, and a new one next to the
 * stream's during an upgrade (`docs/deploy.md`, "Upgrading from the event stream").
 */
export const DELIVERY_SHARD = 'firehose';
/** Sequence number of line `i` of journal entry `n`: n × 10^7 + i (an object holds far fewer lines: 64 MiB of ≥ 0.3 KB events). */
export const LINES_PER_ENTRY = 10_000_000n;
/** Entries read from the journal per Query. */
const JOURNAL_PAGE = 10;
/**
 * Minutes between two sweeps (the stack's schedule). A sweep only finds objects whose notification
 * was lost, or resumes a journal left pending while no object arrives: rare, so every 15 minutes
 * (each run is an invocation, a trace and S3 LISTs at every traffic, `docs/cost.md`).
 */
export const SWEEP_EVERY_MINUTES = 15;
/** The sweep journals objects written in this window before now, ms: three sweeps' time. */
export const SWEEP_WINDOW_MS = 3 * SWEEP_EVERY_MINUTES * 60_000;
/** Below this much time left in the invocation, no further object is started, ms. */
const STOP_BEFORE_MS = 15_000;

export interface ObjectSessionizeDeps {
  journal: IngestJournal;
  objects: RawObjects;
  /** The stream sessionizer (`createSessionizeHandler`): one journal entry is one of its batches. */
  sessionize: (event: KinesisStreamEvent) => Promise<KinesisStreamBatchResponse>;
  /** The archive's delivery: each sessionized object's lines are forwarded to it once. */
  archive: ArchiveDelivery;
  logger: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
  clock?: () => number;
}

/** What an invocation did: objects journaled (new ones), journal entries sessionized, lines handed over. */
export interface ObjectSessionizeOutcome {
  journaled: number;
  sessionized: number;
  lines: number;
}

/**
 * The lines of a raw object as stream records of journal entry `n`: one record a non-empty line
 * (an event as JSON; Firehose concatenates the event function's records, each of which ends in a
 * newline), numbered `n × 10^7 + line`, so an object is a batch with a stable identity: its
 * retry, or a replay of the same entry, carries the same sequence numbers.
 */
export function objectRecords(n: number, data: Buffer): Array<{ sequenceNumber: string; data: Buffer }> {
  const out: Array<{ sequenceNumber: string; data: Buffer }> = [];
  let start = 0;
  let line = 0n;
  const base = BigInt(n) * LINES_PER_ENTRY;
  while (start < data.length) {
    let end = data.indexOf(0x0a, start);
    if (end < 0) end = data.length;
    if (end > start) out.push({ sequenceNumber: String(base + line++), data: data.subarray(start, end) });
    start = end + 1;
  }
  return out;
}

/** The records as the Kinesis event source mapping hands a batch to the stream sessionizer. */
function asStreamBatch(records: ReturnType<typeof objectRecords>, key: string): KinesisStreamEvent {
  return {
    Records: records.map((r) => ({
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: key,
        sequenceNumber: r.sequenceNumber,
        data: r.data.toString('base64'),
        approximateArrivalTimestamp: 0,
      },
      eventSource: 'aws:firehose-object',
      eventVersion: '1.0',
      eventID: `${DELIVERY_SHARD}:${r.sequenceNumber}`,
      eventName: 'aws:s3:object-line',
      invokeIdentityArn: '',
      awsRegion: '',
      eventSourceARN: key,
    })),
  };
}

/** S3 object keys of a notification (URL-encoded, spaces as `+`: S3 "Event message structure"). */
export function notifiedKeys(event: Partial<S3Event>): string[] {
  return (event.Records ?? [])
    .filter((r) => r.eventSource === 'aws:s3' && r.eventName.startsWith('ObjectCreated'))
    .map((r) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
}

/**
 * The sessionizer of the raw delivery (`docs/ingestion.md`, "Choosing the ingestion path"):
 * invoked by S3's `ObjectCreated` notifications (at least once, in no order) and by a sweep on a
 * schedule (an event without records: the objects of the last `SWEEP_WINDOW_MS`). It journals the
 * objects it is told of, then sessionizes the journal in order from its cursor, each entry one
 * batch of the stream sessionizer with the checkpoint (`DELIVERY_SHARD`, its sequence numbers),
 * so the batch markers, rollup checkpoints and the visit cache work as on one Kinesis shard. Once
 * an entry is sessionized, its lines are forwarded to the archive's delivery, then the cursor
 * passes it (`docs/ingestion.md`, "Archive packed"): a failure before the forward (sessionizing
 * is what fails: DynamoDB) retries the entry without having archived anything, so the retry
 * archives it once; only a failure between the delivery's answer and the cursor's write sends an
 * entry's lines twice, as Firehose itself may (at least once); an object journaled twice is
 * forwarded by the one entry the journal names for it (`IngestJournal.claim`). A
 * failed entry stops the drain there and throws (the invocation is retried; a later notification
 * or sweep resumes from it); an object that no longer exists is logged and passed.
 * `remainingMs` (the Lambda context's) stops it before its timeout with the rest left for the next.
 * @throws Error when an entry could not be sessionized
 */
export function createObjectSessionizeHandler(
  deps: ObjectSessionizeDeps,
): (event: Partial<S3Event>, remainingMs?: () => number) => Promise<ObjectSessionizeOutcome> {
  const { journal, objects, logger } = deps;
  const clock = deps.clock ?? Date.now;
  return async (event, remainingMs) => {
    const outcome: ObjectSessionizeOutcome = { journaled: 0, sessionized: 0, lines: 0 };
    const keys = event.Records ? notifiedKeys(event) : await objects.listSince(clock() - SWEEP_WINDOW_MS);
    // Keys of one delivery stream sort by delivery time: journaled in that order when several come at once.
    for (const key of [...keys].sort()) if ((await journal.add(key)) !== null) outcome.journaled++;

    let done = await journal.done();
    for (;;) {
      const page = await journal.pending(done, JOURNAL_PAGE);
      if (page.length === 0) return outcome;
      for (const entry of page) {
        if (remainingMs && remainingMs() < STOP_BEFORE_MS) {
          logger.info('stopping before the timeout; the journal resumes here', { entry: entry.n });
          return outcome;
        }
        const data = await objects.get(entry.key);
        if (data === null)
          logger.error('raw object gone before it was sessionized', { key: entry.key, entry: entry.n });
        else {
          const records = objectRecords(entry.n, data);
          if (records.length > 0) {
            const { batchItemFailures } = await deps.sessionize(asStreamBatch(records, entry.key));
            if (batchItemFailures.length > 0)
              throw new Error(`raw object ${entry.key} (journal entry ${entry.n}) failed; it will be retried`);
            // An object journaled twice (an add that broke off) is archived by the entry that names it.
            if (await journal.claim(entry.key, entry.n)) await deps.archive.put(records.map((r) => r.data));
          }
          outcome.lines += records.length;
        }
        await journal.advance(entry.n);
        done = entry.n;
        outcome.sessionized++;
      }
    }
  };
}
