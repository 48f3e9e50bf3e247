import { afterEach, describe, expect, it, vi } from 'vitest';
import { DynamoDBClient, ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { BULK_CONCURRENCY, batchGet, batchWrite } from '../../lambdas/adapters/dynamo/batch.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { emptyCustomer } from '../../lambdas/domain/payments/customer.js';

/**
 * The bulk writes of `footfall import payments` (and every bulk load) under
 * DynamoDB throttling, answered by a mocked client (`aws-sdk-client-mock`
 * replaces `send`, so the SDK's own retries are not in play: what is seen is
 * what the loader does once they are spent): a throttled request is sent
 * again after a growing pause, unprocessed items too, until all are written;
 * a chunk still throttled after 8 attempts, or any other error, fails the load.
 */

const TABLE = 'footfall';
const meta = { $metadata: { httpStatusCode: 400 } };
const throughput = () =>
  new ProvisionedThroughputExceededException({
    message: 'The level of configured provisioned throughput for the table was exceeded',
    ...meta,
  });
const throttling = () =>
  new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput', ...meta });

function connection() {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
  const mock = mockClient(doc);
  const conn: DynamoConnection = { doc, table: TABLE };
  return { conn, mock };
}

const puts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { PK: `PAY#s`, SK: `P#stripe#${i}`, n: i } } }));

type Sent = { PutRequest?: { Item: { SK: string } } };

/** Runs `work` on fake timers, returning its result and the fake milliseconds its pauses took. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; pausedMs: number }> {
  vi.useFakeTimers();
  const start = Date.now();
  const promise = work();
  promise.catch(() => undefined);
  await vi.runAllTimersAsync();
  const value = await promise;
  return { value, pausedMs: Date.now() - start };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('bulk writes under throttling', () => {
  it('sends a throttled chunk again after growing pauses, and the unprocessed rest, until every item is written once', async () => {
    const { conn, mock } = connection();
    const requests = puts(30);
    let call = 0;
    const written: string[] = [];
    mock.on(BatchWriteCommand).callsFake((input: BatchWriteCommand['input']) => {
      call++;
      if (call === 1) throw throughput();
      if (call === 2) throw throttling();
      const items = (input.RequestItems?.[TABLE] ?? []) as Sent[];
      // The third answer processes half of its chunk and returns the rest unprocessed.
      const done = call === 3 ? items.slice(0, Math.ceil(items.length / 2)) : items;
      written.push(...done.map((r) => r.PutRequest!.Item.SK));
      return { UnprocessedItems: call === 3 ? { [TABLE]: items.slice(done.length) } : {} };
    });
    const { value: calls, pausedMs } = await timed(() => batchWrite(conn, requests));
    // Chunk one (25 items): throttled twice, half processed, the rest; chunk two (5 items): once.
    expect(calls).toBe(5);
    expect([...written].sort()).toEqual(requests.map((r) => r.PutRequest.Item.SK).sort());
    expect(new Set(written).size).toBe(30);
    // Pauses of 50, 100 and 200 ms before attempts 2, 3 and 4 of chunk one.
    expect(pausedMs).toBe(350);
  });

  it('with chunks in flight at once, each is retried on its own and every item ends written', async () => {
    const { conn, mock } = connection();
    const requests = puts(200);
    const seen = new Map<string, number>();
    const written: string[] = [];
    mock.on(BatchWriteCommand).callsFake((input: BatchWriteCommand['input']) => {
      const items = (input.RequestItems?.[TABLE] ?? []) as Sent[];
      const first = items[0]!.PutRequest!.Item.SK;
      const tries = (seen.get(first) ?? 0) + 1;
      seen.set(first, tries);
      if (tries <= 2) throw tries === 1 ? throughput() : throttling();
      written.push(...items.map((r) => r.PutRequest!.Item.SK));
      return { UnprocessedItems: {} };
    });
    const { value: calls } = await timed(() => batchWrite(conn, requests, 8));
    expect(calls).toBe(8 * 3);
    expect(written).toHaveLength(200);
    expect(new Set(written)).toEqual(new Set(requests.map((r) => r.PutRequest.Item.SK)));
  });

  it('gives up on a chunk still throttled after 8 attempts, and at once on an error that is not throttling', async () => {
    const { conn, mock } = connection();
    mock.on(BatchWriteCommand).rejects(throughput());
    const gaveUp = await timed(() =>
      batchWrite(conn, puts(3)).then(
        () => 'written',
        (e: Error) => e.name,
      ),
    );
    expect(gaveUp.value).toBe('ProvisionedThroughputExceededException');
    expect(mock.commandCalls(BatchWriteCommand)).toHaveLength(8);
    // 50 + 100 + 200 + 400 + 800 + 1000 + 1000 ms between the 8 attempts.
    expect(gaveUp.pausedMs).toBe(3550);

    mock.reset();
    mock
      .on(BatchWriteCommand)
      .rejects(
        Object.assign(new Error('Item size has exceeded the maximum allowed size'), { name: 'ValidationException' }),
      );
    const invalid = await batchWrite(conn, puts(3)).then(
      () => 'written',
      (e: Error) => e.name,
    );
    expect(invalid).toBe('ValidationException');
    expect(mock.commandCalls(BatchWriteCommand)).toHaveLength(1);
  });

  it('reads (BatchGetItem) throttled and unprocessed keys again', async () => {
    const { conn, mock } = connection();
    const keys = Array.from({ length: 4 }, (_, i) => ({ PK: 'PAYID#s#stripe', SK: `ch_${i}` }));
    mock
      .on(BatchGetCommand)
      .rejectsOnce(throttling())
      .resolvesOnce({ Responses: { [TABLE]: [keys[0]!] }, UnprocessedKeys: { [TABLE]: { Keys: keys.slice(1) } } })
      .resolvesOnce({ Responses: { [TABLE]: keys.slice(1) } });
    const { value } = await timed(() => batchGet(conn, keys));
    expect(value).toEqual(keys);
    expect(mock.commandCalls(BatchGetCommand)).toHaveLength(3);
  });

  it("keeps a bulk read's chunks in flight together (the import's id lookup), each key read once", async () => {
    const { conn, mock } = connection();
    const keys = Array.from({ length: 1000 }, (_, i) => ({ PK: 'PAYID#s#stripe', SK: `ch_${i}` }));
    let inFlight = 0;
    let most = 0;
    mock.on(BatchGetCommand).callsFake(async (input: BatchGetCommand['input']) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return { Responses: { [TABLE]: input.RequestItems?.[TABLE]?.Keys ?? [] } };
    });
    const read = await batchGet(conn, keys, undefined, BULK_CONCURRENCY);
    expect(most).toBe(BULK_CONCURRENCY);
    expect(read.map((k) => k.SK).sort()).toEqual(keys.map((k) => k.SK).sort());
    expect(mock.commandCalls(BatchGetCommand)).toHaveLength(10);
    // The payment store's lookup of many ids reads them so.
    most = 0;
    await dynamoPaymentStores(conn).payments.aliasTargets(
      's',
      keys.map((k) => ({ provider: 'stripe' as const, id: k.SK })),
    );
    expect(most).toBe(BULK_CONCURRENCY);
  });

  it("the import's bulk writes (customers, as every bulk write of the loader) go through it", async () => {
    const { conn, mock } = connection();
    mock.on(BatchWriteCommand).rejectsOnce(throughput()).resolves({ UnprocessedItems: {} });
    const store = dynamoPaymentStores(conn);
    const customers = Array.from({ length: 3 }, (_, i) => ({ ...emptyCustomer('s', 'stripe', `cus_${i}`), ver: 1 }));
    await timed(() => store.customers.bulkLoadCustomers(customers));
    const calls = mock.commandCalls(BatchWriteCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.args[0].input.RequestItems?.[TABLE]).toHaveLength(3);
  });
});
