import { DeleteCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { bucketExpiry, type AttemptBucket } from '../../domain/auth/attempts.js';

const { ATTEMPTS } = PARTITIONS.attempts.items;

/**
 * Sign-in attempt counters (`docs/data-model.md`, item ATTEMPTS): one item per
 * counter and minute bucket, changed atomically (ADD), so every Lambda
 * instance counts against the same limit. A counter has at most 17 live
 * buckets (a window of 15 minutes and the minutes at its edges), each
 * expiring by TTL when it can no longer count.
 */
export class DynamoAttemptStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Adds `delta` (1, or -1 to take back a refused attempt) to the bucket starting at `start` (ms). */
  async add(key: string, start: number, delta: number): Promise<void> {
    const pk = PARTITIONS.attempts.key(key);
    const sk = ATTEMPTS.key(start);
    const expires = bucketExpiry(start);
    const { Attributes } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: pk, [SK]: sk },
        UpdateExpression: 'ADD n :d SET expires_at = :ttl',
        ExpressionAttributeValues: { ':d': delta, ':ttl': ttlOf(expires).expires_at },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    if (delta > 0 && Number(Attributes?.n) === delta) await recordExpiry(this.conn, pk, sk, expires);
  }

  /** The counter's buckets starting at or after `from` (ms), read a page of 32 at a time (consistent). */
  async buckets(key: string, from: number): Promise<AttemptBucket[]> {
    const out: AttemptBucket[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} >= :from`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.attempts.key(key), ':from': ATTEMPTS.range.from(from) },
      ConsistentRead: true,
      Limit: 32,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) out.push({ start: Number(item[SK]), n: Number(item.n ?? 0) });
    return out;
  }

  /** Deletes every bucket of the counter (a successful sign-in resets it). */
  async clear(key: string): Promise<void> {
    for (const b of await this.buckets(key, 0))
      await this.conn.doc.send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: { [PK]: PARTITIONS.attempts.key(key), [SK]: ATTEMPTS.key(b.start) },
        }),
      );
  }
}
