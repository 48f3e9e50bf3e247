import type { KinesisStreamEvent } from 'aws-lambda';
import type { LocalStreamRecord } from '../lambdas/adapters/local-stream.js';

/** The shard id the local stream plays (it has one). */
export const LOCAL_SHARD = 'shardId-000000000000';

/**
 * Records of the local stream in the shape the Kinesis event source mapping
 * gives a Lambda (base64 data, sequence numbers, arrival time in seconds).
 */
export function toKinesisEvent(
  records: readonly LocalStreamRecord[],
  streamName = 'footfall-events',
): KinesisStreamEvent {
  return {
    Records: records.map((r) => ({
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: r.partitionKey,
        sequenceNumber: r.sequenceNumber,
        data: r.data.toString('base64'),
        approximateArrivalTimestamp: r.approximateArrivalTimestamp / 1000,
      },
      eventSource: 'aws:kinesis',
      eventVersion: '1.0',
      eventID: `${LOCAL_SHARD}:${r.sequenceNumber}`,
      eventName: 'aws:kinesis:record',
      invokeIdentityArn: 'arn:aws:iam::000000000000:role/local',
      awsRegion: 'local',
      eventSourceARN: `arn:aws:kinesis:local:000000000000:stream/${streamName}`,
    })),
  };
}
