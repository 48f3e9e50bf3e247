import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK, TTL_ATTRIBUTE } from './table.js';
import { newSalt } from '../../domain/visitor.js';
import type { SaltStore } from '../../ports.js';
import { PARTITIONS } from './items.js';

const SALT_PK = PARTITIONS.salt.key();
const DAY_MS = 86_400_000;

/**
 * Daily salts in the single table (item SALT). The first instance to need a
 * day's salt creates it with a conditional put, so every instance agrees; the
 * same call deletes salts older than the day before (`docs/security.md` "What is stored about a visitor": old
 * salts are deleted so yesterday's hashes cannot be recomputed). The TTL
 * attribute is a second line of defence in AWS.
 */
export class DynamoSaltStore implements SaltStore {
  private cached: { day: string; salt: string } | undefined;

  constructor(private readonly conn: DynamoConnection) {}

  async saltFor(day: string): Promise<string> {
    if (this.cached?.day === day) return this.cached.salt;
    const key = { [PK]: SALT_PK, [SK]: PARTITIONS.salt.items.SALT.key(day) };
    const existing = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }),
    );
    let salt = existing.Item?.salt as string | undefined;
    if (!salt) {
      const candidate = newSalt();
      const expires = Math.floor((Date.parse(`${day}T00:00:00Z`) + 2 * DAY_MS) / 1000);
      try {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { ...key, salt: candidate, [TTL_ATTRIBUTE]: expires },
            ConditionExpression: `attribute_not_exists(${PK})`,
          }),
        );
        salt = candidate;
        await this.deleteBefore(day);
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        const winner = await this.conn.doc.send(
          new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }),
        );
        salt = String(winner.Item?.salt);
      }
    }
    // Cache only today's salt; an instance serving a day never goes back to an older one.
    if (!this.cached || day > this.cached.day) this.cached = { day, salt };
    return salt;
  }

  /** Deletes salts of days before the day preceding `day` (yesterday's stays for late events near midnight). */
  async deleteBefore(day: string): Promise<number> {
    const keep = new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND ${SK} < :keep`,
        ExpressionAttributeValues: { ':pk': SALT_PK, ':keep': PARTITIONS.salt.items.SALT.key(keep) },
        ProjectionExpression: `${PK}, ${SK}`,
      }),
    );
    for (let i = 0; i < Items.length; i += 25) {
      await this.conn.doc.send(
        new BatchWriteCommand({
          RequestItems: { [this.conn.table]: Items.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: k } })) },
        }),
      );
    }
    return Items.length;
  }
}
