import { BatchWriteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK, TTL_ATTRIBUTE } from './table.js';
import { PARTITIONS } from './items.js';

/**
 * Items with an expiry (sessions, invitations, sign-in counters) carry the TTL
 * attribute, which DynamoDB deletes in AWS. dynalite has no TTL, so each such
 * item also gets an entry in the EXPIRING partition, sorted by expiry, which
 * the local server's sweeper reads with a Query (no Scan) and deletes
 * (`docs/data-model.md`). The entries expire by TTL themselves in AWS.
 */
const EXPIRING_PK = PARTITIONS.expiring.key();
const seconds = (ms: number) => Math.ceil(ms / 1000);
const { EXPIRING } = PARTITIONS.expiring.items;

/** The TTL attribute of an item that expires at `expiresMs` (epoch seconds, as DynamoDB TTL wants). */
export const ttlOf = (expiresMs: number) => ({ [TTL_ATTRIBUTE]: seconds(expiresMs) });

/** Records that the item `pk`/`sk` expires at `expiresMs`, for the local sweeper. */
export async function recordExpiry(conn: DynamoConnection, pk: string, sk: string, expiresMs: number): Promise<void> {
  await conn.doc.send(
    new PutCommand({
      TableName: conn.table,
      Item: {
        [PK]: EXPIRING_PK,
        [SK]: EXPIRING.key(seconds(expiresMs), pk, sk),
        item_pk: pk,
        item_sk: sk,
        ...ttlOf(expiresMs),
      },
    }),
  );
}

/**
 * Deletes what expired before `nowMs`, oldest first, up to `max` items per
 * call; resolves with how many items it deleted. What TTL does in AWS, for
 * the local server's timer.
 */
export async function sweepExpired(conn: DynamoConnection, nowMs: number, max = 500): Promise<number> {
  const { Items = [] } = await conn.doc.send(
    new QueryCommand({
      TableName: conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} < :now`,
      // Entries whose (rounded up) expiry second has come: `<second>#…` sorts below the next second.
      ExpressionAttributeValues: { ':pk': EXPIRING_PK, ':now': EXPIRING.range.before(Math.floor(nowMs / 1000) + 1) },
      Limit: max,
    }),
  );
  for (let i = 0; i < Items.length; i += 12) {
    const chunk = Items.slice(i, i + 12);
    const keys = chunk.flatMap((e) => [
      { [PK]: String(e.item_pk), [SK]: String(e.item_sk) },
      { [PK]: EXPIRING_PK, [SK]: String(e[SK]) },
    ]);
    let pending: Record<string, unknown>[] = keys.map((Key) => ({ DeleteRequest: { Key } }));
    for (let attempt = 0; pending.length > 0 && attempt < 5; attempt++) {
      const { UnprocessedItems } = await conn.doc.send(
        new BatchWriteCommand({ RequestItems: { [conn.table]: pending } }),
      );
      pending = (UnprocessedItems?.[conn.table] ?? []) as Record<string, unknown>[];
    }
  }
  return Items.length;
}
