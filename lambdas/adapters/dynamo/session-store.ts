import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { PARTITIONS } from './items.js';
import type { Session } from '../../domain/auth/accounts.js';

const sessionKey = (hash: string) => ({
  [PK]: PARTITIONS.session.key(hash),
  [SK]: PARTITIONS.session.items.SESSION.key(),
});

/**
 * Sessions in the single table (`docs/data-model.md`, item SESSION), keyed by
 * the SHA-256 of the token, with the TTL attribute. Reads are strongly
 * consistent, so a sign-out is seen by the very next request.
 */
export class DynamoSessionStore {
  constructor(private readonly conn: DynamoConnection) {}

  async create(hash: string, session: Session): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...sessionKey(hash), type: 'SESSION', ...session, ...ttlOf(session.expires) },
      }),
    );
    await recordExpiry(this.conn, PARTITIONS.session.key(hash), 'SESSION', session.expires);
  }

  async get(hash: string): Promise<Session | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: sessionKey(hash), ConsistentRead: true }),
    );
    if (!Item) return null;
    return {
      email: String(Item.email),
      account: String(Item.account),
      created: Number(Item.created),
      expires: Number(Item.expires),
      epoch: Number(Item.epoch ?? 0),
    };
  }

  async delete(hash: string): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: sessionKey(hash) }));
  }
}
