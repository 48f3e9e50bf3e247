import { describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import { FirehoseEventStream, ingestRecords } from '../../lambdas/adapters/firehose-stream.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import { trackedEvent } from '../support/events.js';

const names = { ingest: 'ingest', archive: 'archive' };
const events = [trackedEvent({ path: '/1' }), trackedEvent({ path: '/2' }), trackedEvent({ path: '/3' })];
const paths = (data: Uint8Array | undefined) =>
  Buffer.from(data ?? [])
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).path);

describe('FirehoseEventStream (aws-sdk-client-mock)', () => {
  it("puts a request's events as one JSON-lines record to the ingest stream and one record an event to the archive", async () => {
    const mock = mockClient(FirehoseClient);
    mock.on(PutRecordBatchCommand).resolves({ FailedPutCount: 0, RequestResponses: [] });
    await new FirehoseEventStream(new FirehoseClient({}), names).put(events);
    const calls = mock.commandCalls(PutRecordBatchCommand).map((c) => c.args[0].input);
    const ingest = calls.find((c) => c.DeliveryStreamName === 'ingest');
    const archive = calls.find((c) => c.DeliveryStreamName === 'archive');
    expect(ingest?.Records?.map((r) => paths(r.Data))).toEqual([['/1', '/2', '/3']]);
    expect(archive?.Records?.map((r) => paths(r.Data))).toEqual([['/1'], ['/2'], ['/3']]);
    mock.restore();
  });

  it('sends the records that failed once more, and throws UnavailableError (→ 503) when they fail again', async () => {
    const mock = mockClient(FirehoseClient);
    mock
      .on(PutRecordBatchCommand, { DeliveryStreamName: 'archive' })
      .resolvesOnce({
        FailedPutCount: 1,
        RequestResponses: [{ RecordId: 'a' }, { ErrorCode: 'ServiceUnavailableException' }, { RecordId: 'c' }],
      })
      .resolvesOnce({ FailedPutCount: 0, RequestResponses: [{ RecordId: 'b' }] });
    mock.on(PutRecordBatchCommand, { DeliveryStreamName: 'ingest' }).resolves({ FailedPutCount: 0 });
    await new FirehoseEventStream(new FirehoseClient({}), names).put(events);
    const archive = mock
      .commandCalls(PutRecordBatchCommand)
      .map((c) => c.args[0].input)
      .filter((c) => c.DeliveryStreamName === 'archive');
    expect(archive[1]?.Records?.map((r) => paths(r.Data))).toEqual([['/2']]);

    mock.reset();
    mock.on(PutRecordBatchCommand, { DeliveryStreamName: 'ingest' }).resolves({
      FailedPutCount: 1,
      RequestResponses: [{ ErrorCode: 'InternalFailure' }],
    });
    mock.on(PutRecordBatchCommand, { DeliveryStreamName: 'archive' }).resolves({ FailedPutCount: 0 });
    await expect(new FirehoseEventStream(new FirehoseClient({}), names).put(events)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    mock.reset();
    mock.on(PutRecordBatchCommand).rejects(new Error('ThrottlingException'));
    await expect(new FirehoseEventStream(new FirehoseClient({}), names).put(events)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    mock.restore();
  });

  it('packs the lines into records of at most 1,000 KiB', () => {
    const big = Array.from({ length: 50 }, (_, i) => trackedEvent({ path: `/${'x'.repeat(40_000)}${i}` }));
    const records = ingestRecords(big);
    expect(records.length).toBeGreaterThan(1);
    for (const r of records) expect(r.length).toBeLessThanOrEqual(1000 * 1024);
    expect(records.flatMap((r) => paths(r))).toHaveLength(50);
  });
});
