import type { TrackedEvent } from '../domain/tracked-event.js';

/** Kinesis partition keys are at most 256 characters. */
const MAX_PARTITION_KEY = 256;

/**
 * Partition key of an event: site and visitor, so one visitor's events stay in
 * order on one shard (`docs/ingestion.md` "The stream"). Cut to Kinesis's 256-character limit;
 * a cut only merges partitions, it never splits a visitor.
 */
export function partitionKey(event: Pick<TrackedEvent, 'site' | 'visitor_id'>): string {
  return `${event.site}/${event.visitor_id}`.slice(0, MAX_PARTITION_KEY);
}

/** Record data on the stream: the event as UTF-8 JSON. */
export function encodeEvent(event: TrackedEvent): Buffer {
  return Buffer.from(JSON.stringify(event), 'utf8');
}
