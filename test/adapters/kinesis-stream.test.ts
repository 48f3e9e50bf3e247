import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import { mockClient } from 'aws-sdk-client-mock';
import { KinesisEventStream } from '../../lambdas/adapters/kinesis-stream.js';
import { partitionKey } from '../../lambdas/adapters/stream-record.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import { trackedEvent } from '../support/events.js';
import { startKinesalite, type Kinesalite } from '../support/kinesalite.js';

describe('KinesisEventStream against kinesalite', () => {
  let kinesis: Kinesalite;
  let client: KinesisClient;
  const streamName = 'footfall-events';

  beforeAll(async () => {
    kinesis = await startKinesalite(streamName);
    client = kinesis.client;
  });
  afterAll(async () => kinesis.close());

  it('puts every event with the site+visitor partition key, in chunks of 500', async () => {
    const events = Array.from({ length: 1203 }, (_, i) =>
      trackedEvent({ path: `/k${i}`, visitor_id: `visitor-${i % 7}abc` }),
    );
    await new KinesisEventStream(client, streamName).put(events);

    const { StreamDescription } = await client.send(new DescribeStreamCommand({ StreamName: streamName }));
    const shardId = StreamDescription?.Shards?.[0]?.ShardId;
    const { ShardIterator } = await client.send(
      new GetShardIteratorCommand({ StreamName: streamName, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    const got: Array<{ key: string; path: string }> = [];
    let iterator = ShardIterator;
    while (iterator && got.length < events.length) {
      const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }));
      for (const r of page.Records ?? []) {
        got.push({ key: r.PartitionKey ?? '', path: JSON.parse(Buffer.from(r.Data ?? []).toString()).path });
      }
      if (!page.Records?.length) break;
      iterator = page.NextShardIterator;
    }
    expect(got).toEqual(events.map((e) => ({ key: partitionKey(e), path: e.path })));
  });

  it('keeps partition keys within 256 characters', () => {
    const key = partitionKey({ site: `${'a'.repeat(240)}.com`, visitor_id: 'v'.repeat(64) });
    expect(key.length).toBe(256);
  });
});

describe('KinesisEventStream failures (aws-sdk-client-mock)', () => {
  const events = [trackedEvent({ path: '/1' }), trackedEvent({ path: '/2' }), trackedEvent({ path: '/3' })];

  it('sends the records that failed once more, and succeeds when they go through', async () => {
    const mock = mockClient(KinesisClient);
    mock
      .on(PutRecordsCommand)
      .resolvesOnce({
        FailedRecordCount: 1,
        Records: [
          { SequenceNumber: '1' },
          { ErrorCode: 'ProvisionedThroughputExceededException' },
          { SequenceNumber: '3' },
        ],
      })
      .resolvesOnce({ FailedRecordCount: 0, Records: [{ SequenceNumber: '4' }] });
    await new KinesisEventStream(new KinesisClient({}), 's').put(events);
    const calls = mock.commandCalls(PutRecordsCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.Records?.map((r) => JSON.parse(Buffer.from(r.Data ?? []).toString()).path)).toEqual([
      '/2',
    ]);
    mock.restore();
  });

  it('throws UnavailableError (→ 503) when records still fail after the retry', async () => {
    const mock = mockClient(KinesisClient);
    mock.on(PutRecordsCommand).resolves({
      FailedRecordCount: 1,
      Records: [{ ErrorCode: 'InternalFailure' }, { SequenceNumber: '2' }, { SequenceNumber: '3' }],
    });
    await expect(new KinesisEventStream(new KinesisClient({}), 's').put(events)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    mock.restore();
  });

  it('throws UnavailableError when the call itself fails', async () => {
    const mock = mockClient(KinesisClient);
    mock.on(PutRecordsCommand).rejects(new Error('ThrottlingException'));
    await expect(new KinesisEventStream(new KinesisClient({}), 's').put(events)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    mock.restore();
  });
});
