import {
  KinesisClient,
  PutRecordsCommand,
  type KinesisClientConfig,
  type PutRecordsRequestEntry,
} from '@aws-sdk/client-kinesis';
import type { TrackedEvent } from '../domain/tracked-event.js';
import { UnavailableError } from '../domain/errors.js';
import type { EventStream } from '../ports.js';
import { encodeEvent, partitionKey } from './stream-record.js';

/** PutRecords takes at most 500 records per call (Kinesis API reference). */
const MAX_RECORDS_PER_CALL = 500;

/**
 * A Kinesis client. In Lambda it uses the SDK's default (HTTP/2) handler and
 * the runtime's SDK, so the bundle carries no HTTP stack of its own; against
 * kinesalite pass `requestHandler: new NodeHttpHandler()` from
 * `@smithy/node-http-handler`, as the HTTP/2 handler fails there
 * (`docs/reliability.md` "What they do not show").
 */
export function createKinesisClient(
  options: { endpoint?: string; maxAttempts?: number; requestHandler?: KinesisClientConfig['requestHandler'] } = {},
): KinesisClient {
  return new KinesisClient({
    ...(options.endpoint
      ? { endpoint: options.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    maxAttempts: options.maxAttempts ?? 3,
    ...(options.requestHandler ? { requestHandler: options.requestHandler } : {}),
  });
}

/**
 * The event stream on Kinesis Data Streams. `PutRecords` can partly fail
 * (throttling per shard): the failed records are sent once more, and if any
 * still fail the whole put throws `UnavailableError` so the client gets 503 and
 * retries — never a 202 for an event that was not written.
 */
export class KinesisEventStream implements EventStream {
  constructor(
    private readonly client: KinesisClient,
    private readonly streamName: string,
  ) {}

  async put(events: readonly TrackedEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += MAX_RECORDS_PER_CALL) {
      const entries = events
        .slice(i, i + MAX_RECORDS_PER_CALL)
        .map((event): PutRecordsRequestEntry => ({ Data: encodeEvent(event), PartitionKey: partitionKey(event) }));
      let failed = await this.send(entries);
      if (failed.length > 0) failed = await this.send(failed);
      if (failed.length > 0) throw new UnavailableError(`${failed.length} records not written to ${this.streamName}`);
    }
  }

  /** Sends entries and returns those Kinesis did not accept. */
  private async send(entries: PutRecordsRequestEntry[]): Promise<PutRecordsRequestEntry[]> {
    let result;
    try {
      result = await this.client.send(new PutRecordsCommand({ StreamName: this.streamName, Records: entries }));
    } catch (error) {
      throw new UnavailableError(`PutRecords to ${this.streamName} failed`, error);
    }
    if (!result.FailedRecordCount) return [];
    return entries.filter((_, index) => result.Records?.[index]?.ErrorCode);
  }
}
