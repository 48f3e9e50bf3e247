import { randomInt } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { ConflictError } from '../../domain/errors.js';
import { PARTITIONS } from './items.js';

/** A user as stored: one account each; no password until the set-password link is used. */
export interface User {
  email: string;
  account: string;
  created: string;
  password_hash: string | null;
  /**
   * Grows with each password change; a session holds the value it started
   * with, so a change ends every older session. It starts at a random value,
   * so the sessions of a removed user do not come back if the email is added again.
   */
  epoch: number;
}

/** A user as the account's list shows it. */
export interface Member {
  email: string;
  created: string;
  status: 'active' | 'invited';
}

/** A one-time link: an invitation (`invite`) or a set-password link from the CLI (`set-password`). */
export interface Invite {
  email: string;
  account: string;
  created: number;
  expires: number;
}

const userKey = (email: string) => ({ [PK]: PARTITIONS.user.key(email), [SK]: 'USER' });
const memberKey = (account: string, email: string) => ({
  [PK]: PARTITIONS.account.key(account),
  [SK]: PARTITIONS.user.key(email),
});
const inviteKey = (hash: string) => ({ [PK]: PARTITIONS.invite.key(hash), [SK]: 'INVITE' });

function toUser(item: Record<string, unknown>): User {
  return {
    email: String(item.email),
    account: String(item.account),
    created: String(item.created),
    password_hash: typeof item.password_hash === 'string' ? item.password_hash : null,
    epoch: Number(item.epoch ?? 0),
  };
}

/**
 * Users, account memberships and one-time links in the single table
 * (`docs/data-model.md`: USER by email for sign-in, MEMBER in the account's
 * partition for its list, INVITE by the token's hash with a TTL). Each is
 * one small item; an account's users are a Query of its partition.
 */
export class DynamoUserStore {
  constructor(private readonly conn: DynamoConnection) {}

  async get(email: string): Promise<User | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: userKey(email), ConsistentRead: true }),
    );
    return Item ? toUser(Item) : null;
  }

  /** Adds a user without a password (status invited). @throws ConflictError when the email is taken, in any account */
  async add(email: string, account: string, now: Date): Promise<User> {
    const user: User = { email, account, created: now.toISOString(), password_hash: null, epoch: randomInt(2 ** 40) };
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...userKey(email), type: 'USER', ...user },
          ConditionExpression: `attribute_not_exists(${PK})`,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new ConflictError(`${email} already has a Footfall user`, 'email');
      throw error;
    }
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...memberKey(account, email), type: 'MEMBER', email, created: user.created, status: 'invited' },
      }),
    );
    return user;
  }

  /**
   * Sets the password hash and moves the user's epoch on, which ends every
   * session started before. Resolves with the new epoch, or null when the
   * user no longer exists.
   */
  async setPassword(email: string, hash: string): Promise<number | null> {
    try {
      const { Attributes } = await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: userKey(email),
          UpdateExpression: 'SET password_hash = :h ADD epoch :one',
          ConditionExpression: `attribute_exists(${PK})`,
          ExpressionAttributeValues: { ':h': hash, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const account = String(Attributes?.account);
      await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: memberKey(account, email),
          UpdateExpression: 'SET #s = :a',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':a': 'active' },
        }),
      );
      return Number(Attributes?.epoch);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }

  /** Removes a user: the USER item first (what every session check reads), then the membership. */
  async remove(user: Pick<User, 'email' | 'account'>): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: userKey(user.email) }));
    await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: memberKey(user.account, user.email) }),
    );
  }

  /** The account's users, by email, read a page of 100 at a time. */
  async members(account: string): Promise<Member[]> {
    const members: Member[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :prefix)`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.account.key(account), ':prefix': PARTITIONS.user.prefix },
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const i of page.Items ?? [])
        members.push({
          email: String(i.email),
          created: String(i.created),
          status: i.status === 'active' ? 'active' : 'invited',
        });
    }
    return members;
  }

  /** Stores a one-time link by the SHA-256 of its token, with the TTL attribute. */
  async addInvite(hash: string, invite: Invite): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...inviteKey(hash), type: 'INVITE', ...invite, ...ttlOf(invite.expires) },
      }),
    );
    await recordExpiry(this.conn, PARTITIONS.invite.key(hash), 'INVITE', invite.expires);
  }

  async getInvite(hash: string): Promise<Invite | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: inviteKey(hash), ConsistentRead: true }),
    );
    return Item
      ? {
          email: String(Item.email),
          account: String(Item.account),
          created: Number(Item.created),
          expires: Number(Item.expires),
        }
      : null;
  }

  /** Deletes a one-time link and resolves with it, or null when it was already used: of two uses at once, one wins. */
  async takeInvite(hash: string): Promise<Invite | null> {
    try {
      const { Attributes } = await this.conn.doc.send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: inviteKey(hash),
          ConditionExpression: `attribute_exists(${PK})`,
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes
        ? {
            email: String(Attributes.email),
            account: String(Attributes.account),
            created: Number(Attributes.created),
            expires: Number(Attributes.expires),
          }
        : null;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }
}
