import { describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import {
  FirehoseArchiveDelivery,
  FirehoseEventStream,
  ingestRecords,
  jsonLineRecords,
  putRecordBatchCalls,
} from '../../lambdas/adapters/firehose-stream.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import { trackedEvent } from '../support/events.js';

const events = [trackedEvent({ path: '/1' }), trackedEvent({ path: '/2' }), trackedEvent({ path: '/3' })];
const paths = (data: Uint8Array | undefined) =>
  Buffer.from(data ?? [])
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).path);
const line = (i: number, pad = 0) => Buffer.from(JSON.stringify({ path: `/${i}`, pad: 'x'.repeat(pad) }));

describe('FirehoseEventStream (aws-sdk-client-mock)', () => {
  it("puts a request's events as one JSON-lines record to the ingest stream, and nothing to the archive", async () => {
    const mock = mockClient(FirehoseClient);
    mock.on(PutRecordBatchCommand).resolves({ FailedPutCount: 0, RequestResponses: [] });
    await new FirehoseEventStream(new FirehoseClient({}), 'ingest').put(events);
    const calls = mock.commandCalls(PutRecordBatchCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => c.DeliveryStreamName)).toEqual(['ingest']);
    expect(calls[0]?.Records?.map((r) => paths(r.Data))).toEqual([['/1', '/2', '/3']]);
    mock.restore();
  });

  it('sends the record that failed once more, and throws UnavailableError (→ 503) when it fails again', async () => {
    const mock = mockClient(FirehoseClient);
    mock
      .on(PutRecordBatchCommand)
      .resolvesOnce({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'ServiceUnavailableException' }] })
      .resolvesOnce({ FailedPutCount: 0, RequestResponses: [{ RecordId: 'b' }] });
    await new FirehoseEventStream(new FirehoseClient({}), 'ingest').put(events);
    expect(mock.commandCalls(PutRecordBatchCommand)).toHaveLength(2);

    mock.reset();
    mock
      .on(PutRecordBatchCommand)
      .resolves({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'InternalFailure' }] });
    await expect(new FirehoseEventStream(new FirehoseClient({}), 'ingest').put(events)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    mock.reset();
    mock.on(PutRecordBatchCommand).rejects(new Error('ThrottlingException'));
    await expect(new FirehoseEventStream(new FirehoseClient({}), 'ingest').put(events)).rejects.toBeInstanceOf(
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

describe('the archive records (JSON lines for multi-record deaggregation)', () => {
  it('holds at most 500 lines and 1,000 KiB a record, every line once and in order, each ending in a newline', () => {
    const lines = Array.from({ length: 1_234 }, (_, i) => line(i));
    const records = jsonLineRecords(lines, 500);
    expect(records.map((r) => paths(r).length)).toEqual([500, 500, 234]);
    expect(records.every((r) => r.at(-1) === 0x0a)).toBe(true);
    expect(records.flatMap(paths)).toEqual(lines.map((_, i) => `/${i}`));

    const wide = Array.from({ length: 300 }, (_, i) => line(i, 7_000)); // ~7 KB a line: the byte limit first
    const wideRecords = jsonLineRecords(wide, 500);
    expect(wideRecords.length).toBe(3);
    for (const r of wideRecords) expect(r.length).toBeLessThanOrEqual(1000 * 1024);
    expect(wideRecords.flatMap(paths)).toHaveLength(300);
  });

  it('splits records into PutRecordBatch calls of at most 500 records and 4 MiB', () => {
    const records = Array.from({ length: 12 }, () => Buffer.alloc(900 * 1024, 0x20));
    const calls = putRecordBatchCalls(records);
    expect(calls.map((c) => c.length)).toEqual([4, 4, 4]);
    for (const c of calls) expect(c.reduce((n, r) => n + r.length, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(putRecordBatchCalls(Array.from({ length: 1_001 }, () => Buffer.from('{}\n'))).map((c) => c.length)).toEqual([
      500, 500, 1,
    ]);
  });
});

describe('FirehoseArchiveDelivery (aws-sdk-client-mock)', () => {
  it("puts an object's lines as records of ≤ 500 events to the archive stream", async () => {
    const mock = mockClient(FirehoseClient);
    mock.on(PutRecordBatchCommand).resolves({ FailedPutCount: 0 });
    const lines = Array.from({ length: 1_100 }, (_, i) => line(i));
    await new FirehoseArchiveDelivery(new FirehoseClient({}), 'archive').put(lines);
    const calls = mock.commandCalls(PutRecordBatchCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => c.DeliveryStreamName)).toEqual(['archive']);
    expect(calls[0]?.Records?.map((r) => paths(r.Data).length)).toEqual([500, 500, 100]);
    mock.restore();
  });

  it('resends only the refused records, so a record Firehose took is sent once; gives up after four sends', async () => {
    const mock = mockClient(FirehoseClient);
    mock
      .on(PutRecordBatchCommand)
      .resolvesOnce({
        FailedPutCount: 1,
        RequestResponses: [{ RecordId: 'a' }, { ErrorCode: 'ServiceUnavailableException' }, { RecordId: 'c' }],
      })
      .resolvesOnce({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'ServiceUnavailableException' }] })
      .resolves({ FailedPutCount: 0, RequestResponses: [{ RecordId: 'b' }] });
    const lines = Array.from({ length: 1_500 }, (_, i) => line(i));
    await new FirehoseArchiveDelivery(new FirehoseClient({}), 'archive').put(lines);
    const sent = mock.commandCalls(PutRecordBatchCommand).flatMap((c) => c.args[0].input.Records ?? []);
    const sentPaths = sent.flatMap((r) => paths(r.Data));
    expect(sentPaths).toHaveLength(1_500 + 2 * 500); // the middle record three times, the others once
    expect(new Set(sentPaths).size).toBe(1_500);

    mock.reset();
    mock
      .on(PutRecordBatchCommand)
      .resolves({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'InternalFailure' }] });
    await expect(new FirehoseArchiveDelivery(new FirehoseClient({}), 'archive').put([line(1)])).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(mock.commandCalls(PutRecordBatchCommand)).toHaveLength(4);
    mock.restore();
  });
});
