import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';

/** The first and last sequence numbers of the batch a shard's sessionizer last started. */
export interface BatchMarker {
  first: string;
  last: string;
}

/**
 * One item per shard (`SHARD#<shard>`, `INFLIGHT`) naming the batch in
 * progress, so that a retry that arrives with more records than the attempt
 * that failed can be split at the old boundary (see `createSessionizeHandler`).
 */
export class DynamoBatchMarkers {
  constructor(private readonly conn: DynamoConnection) {}

  async get(shard: string): Promise<BatchMarker | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: PARTITIONS.shard.key(shard), [SK]: PARTITIONS.shard.items.BATCH_MARKER.key() },
        ConsistentRead: true,
      }),
    );
    return Item ? { first: String(Item.first), last: String(Item.last) } : null;
  }

  async put(shard: string, marker: BatchMarker): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          [PK]: PARTITIONS.shard.key(shard),
          [SK]: PARTITIONS.shard.items.BATCH_MARKER.key(),
          type: 'BATCH_MARKER',
          ...marker,
        },
      }),
    );
  }
}
