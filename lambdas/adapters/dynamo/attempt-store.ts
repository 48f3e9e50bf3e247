import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import type { AttemptWindow } from '../../domain/auth/attempts.js';
import { PARTITIONS } from './items.js';

/**
 * Sign-in attempt counters (`docs/data-model.md`, item ATTEMPTS): one item per
 * key and fixed window, incremented atomically, so every Lambda instance
 * counts against the same limit.
 */
export class DynamoAttemptStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Counts one attempt in the window; resolves with the count including it. */
  async hit(w: AttemptWindow): Promise<number> {
    const pk = PARTITIONS.attempts.key(w.key);
    const sk = String(w.windowStart);
    const { Attributes } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: pk, [SK]: sk },
        UpdateExpression: 'ADD n :one SET expires_at = :ttl',
        ExpressionAttributeValues: { ':one': 1, ':ttl': ttlOf(w.expiresAt).expires_at },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const n = Number(Attributes?.n ?? 1);
    if (n === 1) await recordExpiry(this.conn, pk, sk, w.expiresAt);
    return n;
  }
}
