import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { inParallel } from '../../domain/parallel.js';

type Key = Record<string, unknown>;
type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Key } };

const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));

/**
 * Errors DynamoDB answers when a partition or the table is over its
 * throughput (DynamoDB developer guide, "Error handling": HTTP 400
 * ProvisionedThroughputExceededException, ThrottlingException,
 * RequestLimitExceeded). The SDK's standard retry strategy retries them a few
 * times; a bulk write goes on retrying them as it does unprocessed items.
 */
const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

const throttled = (error: unknown) => error instanceof Error && THROTTLED.has(error.name);

/** Maximum attempts of one chunk (unprocessed or throttled) before a bulk write gives up. */
const MAX_ATTEMPTS = 8;

/**
 * Requests a bulk path (import, bulk load, rebuild's recompute) keeps in
 * flight at once: enough to overlap the round trips, few enough that a new
 * on-demand table's partitions see no burst the SDK's retries would not
 * absorb (`docs/payments.md`, "Importing historic payments").
 */
export const BULK_CONCURRENCY = 8;

/**
 * BatchWriteItem in chunks of 25, re-sending unprocessed items (DynamoDB
 * returns them under throttling) and throttled requests (`THROTTLED`, once
 * the SDK's own retries gave up) with exponential backoff, 50 ms doubling up
 * to 1 s. With
 * `concurrency` above 1, that many chunks are in flight at once: only for
 * writes whose order between chunks does not matter.
 * @returns the BatchWriteItem calls made
 * @throws after 8 attempts of a chunk with items still unprocessed or throttled; any other error at once
 */
export async function batchWrite(
  conn: DynamoConnection,
  requests: readonly WriteRequest[],
  concurrency = 1,
): Promise<number> {
  let calls = 0;
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += 25) chunks.push(requests.slice(i, i + 25));
  await inParallel(chunks, concurrency, async (chunk) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await pause(attempt);
      calls++;
      try {
        const result = await conn.doc.send(new BatchWriteCommand({ RequestItems: { [conn.table]: pending } }));
        pending = (result.UnprocessedItems?.[conn.table] ?? []) as WriteRequest[];
      } catch (error) {
        if (!throttled(error) || attempt + 1 >= MAX_ATTEMPTS) throw error;
      }
      if (pending.length > 0 && attempt + 1 >= MAX_ATTEMPTS)
        throw new Error(`BatchWriteItem left ${pending.length} items unprocessed`);
    }
  });
  return calls;
}

/**
 * BatchGetItem in chunks of 100 (strongly consistent), re-asking for
 * unprocessed keys and throttled requests as `batchWrite` does. Returns the items found, in no particular order.
 * `attributes`, when given, are the only ones read back (a ProjectionExpression: fewer bytes over the
 * wire; DynamoDB still bills the whole item's size). With `concurrency` above 1, that many chunks are in
 * flight at once (a bulk path's reads: `BULK_CONCURRENCY`).
 * @throws after 8 attempts of a chunk with keys still unprocessed or throttled; any other error at once
 */
export async function batchGet(
  conn: DynamoConnection,
  keys: readonly Key[],
  attributes?: readonly string[],
  concurrency = 1,
): Promise<Record<string, unknown>[]> {
  const projection = attributes && {
    ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a])),
  };
  const chunks: Key[][] = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  const items: Record<string, unknown>[] = [];
  await inParallel(chunks, concurrency, async (chunk) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await pause(attempt);
      try {
        const result = await conn.doc.send(
          new BatchGetCommand({
            RequestItems: { [conn.table]: { Keys: pending, ConsistentRead: true, ...projection } },
          }),
        );
        items.push(...((result.Responses?.[conn.table] ?? []) as Record<string, unknown>[]));
        pending = (result.UnprocessedKeys?.[conn.table]?.Keys ?? []) as Key[];
      } catch (error) {
        if (!throttled(error) || attempt + 1 >= MAX_ATTEMPTS) throw error;
      }
      if (pending.length > 0 && attempt + 1 >= MAX_ATTEMPTS)
        throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
    }
  });
  return items;
}
