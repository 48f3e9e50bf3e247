import { GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { NotFoundError } from '../../domain/errors.js';
import { hashApiKey, newApiKey, newKeyId, type ApiKeyInfo } from '../../domain/api-key.js';
import { PARTITIONS } from './items.js';

const toInfo = (i: Record<string, unknown>): ApiKeyInfo => ({
  id: String(i.id),
  account: String(i.account),
  name: (i.name as string | null) ?? null,
  created: String(i.created),
  last_used: (i.last_used as string | null) ?? null,
  revoked: (i.revoked as string | null) ?? null,
});

const listKey = (id: string) => ({ [PK]: PARTITIONS.keys.key(), [SK]: PARTITIONS.keys.items.KEY_INFO.key(id) });
const hashKey = (hash: string) => ({ [PK]: PARTITIONS.apiKey.key(hash), [SK]: PARTITIONS.apiKey.items.API_KEY.key() });
/** `last_used` is written at most this often per key and instance. */
const LAST_USED_EVERY_MS = 5 * 60_000;

/**
 * API keys in the single table (`docs/data-model.md`: API_KEY by hash for
 * authentication, KEY_INFO by id for listing). Only the SHA-256 of a key is
 * stored. Authentication reads the key's item on every request (strongly
 * consistent), so a revoked key fails on its very next request.
 */
export class DynamoKeyStore {
  private readonly touched = new Map<string, number>();

  constructor(private readonly conn: DynamoConnection) {}

  /** Creates a key for an account; the returned `key` is the only time it exists in clear. */
  async create(account: string, name: string | null, now: Date): Promise<ApiKeyInfo & { key: string }> {
    const key = newApiKey();
    const hash = hashApiKey(key);
    const info: ApiKeyInfo = {
      id: newKeyId(),
      account,
      name,
      created: now.toISOString(),
      last_used: null,
      revoked: null,
    };
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...hashKey(hash), type: 'API_KEY', id: info.id, account, revoked: null },
      }),
    );
    await this.conn.doc.send(
      new PutCommand({ TableName: this.conn.table, Item: { ...listKey(info.id), type: 'KEY_INFO', ...info, hash } }),
    );
    return { ...info, key };
  }

  /** Every key of every account, read a page of 100 at a time. */
  async list(): Promise<ApiKeyInfo[]> {
    const keys: ApiKeyInfo[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.keys.key() },
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const i of page.Items ?? []) keys.push(toInfo(i));
    return keys;
  }

  /** One key's information by id, or null. */
  async info(id: string): Promise<ApiKeyInfo | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: listKey(id), ConsistentRead: true }),
    );
    return Item ? toInfo(Item) : null;
  }

  /** Revokes a key; its next request fails. @throws NotFoundError for an unknown id */
  async revoke(id: string, now: Date): Promise<ApiKeyInfo> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: listKey(id), ConsistentRead: true }),
    );
    if (!Item) throw new NotFoundError(`no API key ${id}`);
    const revoked = (Item.revoked as string | null) ?? now.toISOString();
    // The lookup item first: that is what authentication reads.
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: hashKey(String(Item.hash)),
        UpdateExpression: 'SET revoked = :r',
        ExpressionAttributeValues: { ':r': revoked },
      }),
    );
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: listKey(id),
        UpdateExpression: 'SET revoked = :r',
        ExpressionAttributeValues: { ':r': revoked },
      }),
    );
    return {
      id,
      account: String(Item.account),
      name: (Item.name as string | null) ?? null,
      created: String(Item.created),
      last_used: (Item.last_used as string | null) ?? null,
      revoked,
    };
  }

  /**
   * The account of a valid, unrevoked key, or null. Records the key's
   * `last_used` (ISO 8601, UTC) at most every 5 minutes per key and instance
   * (a write per request would cost more than the read). That write is the
   * only one the report and MCP functions may make (`docs/security.md` "IAM: least privilege", `lib/functions.ts`
   * `KEY_USE_UPDATE`): UpdateItem on the `KEYS` partition, of `last_used`
   * alone, returning nothing; so it names no other attribute and asks for no
   * return values, and `attribute_exists` keeps it from creating an item.
   */
  async authenticate(key: string, now: Date): Promise<string | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: hashKey(hashApiKey(key)), ConsistentRead: true }),
    );
    if (!Item || Item.revoked) return null;
    const id = String(Item.id);
    const last = this.touched.get(id) ?? 0;
    if (now.getTime() - last >= LAST_USED_EVERY_MS) {
      this.touched.set(id, now.getTime());
      await this.conn.doc
        .send(
          new UpdateCommand({
            TableName: this.conn.table,
            Key: listKey(id),
            UpdateExpression: 'SET last_used = :t',
            ConditionExpression: `attribute_exists(${PK})`,
            ExpressionAttributeValues: { ':t': now.toISOString() },
            ReturnValues: 'NONE',
          }),
        )
        .catch((error) => {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        });
    }
    return String(Item.account);
  }
}
