import { randomInt } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { ConflictError } from '../../domain/errors.js';
import { storedRole, type Role } from '../../domain/auth/role.js';
import { PARTITIONS } from './items.js';
import type { Invite, Member, User } from '../../domain/auth/accounts.js';

/** How long a change of owners holds the account's role lock (ms): far longer than its few requests take. */
export const ROLE_LOCK_MS = 10_000;

const { USER, LINK } = PARTITIONS.user.items;
const { MEMBER, ROLE_LOCK } = PARTITIONS.account.items;
const userKey = (email: string) => ({ [PK]: PARTITIONS.user.key(email), [SK]: USER.key() });
const memberKey = (account: string, email: string) => ({
  [PK]: PARTITIONS.account.key(account),
  [SK]: MEMBER.key(email),
});
const roleLockKey = (account: string) => ({ [PK]: PARTITIONS.account.key(account), [SK]: ROLE_LOCK.key() });
const inviteKey = (hash: string) => ({ [PK]: PARTITIONS.invite.key(hash), [SK]: PARTITIONS.invite.items.INVITE.key() });
/** A user's pointer to one of their links, so that setting a password can delete them all. */
const linkKey = (email: string, hash: string) => ({ [PK]: PARTITIONS.user.key(email), [SK]: LINK.key(hash) });

function toInvite(item: Record<string, unknown>): Invite {
  return {
    email: String(item.email),
    account: String(item.account),
    created: Number(item.created),
    expires: Number(item.expires),
    // A link stored before links carried an epoch matches no user (epochs are never negative): it is dead.
    epoch: typeof item.epoch === 'number' ? item.epoch : -1,
  };
}

function toUser(item: Record<string, unknown>): User {
  return {
    email: String(item.email),
    account: String(item.account),
    created: String(item.created),
    password_hash: typeof item.password_hash === 'string' ? item.password_hash : null,
    epoch: Number(item.epoch ?? 0),
    role: storedRole(item.role),
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
  async add(email: string, account: string, now: Date, role: Role): Promise<User> {
    const user: User = {
      email,
      account,
      created: now.toISOString(),
      password_hash: null,
      epoch: randomInt(2 ** 40),
      role,
    };
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
        Item: { ...memberKey(account, email), type: 'MEMBER', email, created: user.created, status: 'invited', role },
      }),
    );
    return user;
  }

  /**
   * Sets the password hash and moves the user's epoch on, which ends every
   * session started before and kills every set-password link made before
   * (each carries the epoch it was made at); then deletes the user's links.
   * With `expectEpoch`, only if the user's epoch is still that (a link being
   * used). Resolves with the new epoch, or null when the user no longer
   * exists or its epoch moved on.
   */
  async setPassword(email: string, hash: string, expectEpoch?: number): Promise<number | null> {
    let epoch: number;
    try {
      const { Attributes } = await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: userKey(email),
          UpdateExpression: 'SET password_hash = :h ADD epoch :one',
          ConditionExpression:
            expectEpoch === undefined ? `attribute_exists(${PK})` : `attribute_exists(${PK}) AND epoch = :e`,
          ExpressionAttributeValues: {
            ':h': hash,
            ':one': 1,
            ...(expectEpoch === undefined ? {} : { ':e': expectEpoch }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      epoch = Number(Attributes?.epoch);
      await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: memberKey(String(Attributes?.account), email),
          UpdateExpression: 'SET #s = :a',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':a': 'active' },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
    await this.dropLinks(email);
    return epoch;
  }

  /** Deletes every set-password link of a user and its pointer, reading the pointers a page of 100 at a time. */
  private async dropLinks(email: string): Promise<void> {
    for await (const item of this.itemsUnder(PARTITIONS.user.key(email), LINK.range.all())) {
      const linkHash = String(item[SK]).slice(LINK.range.all().length);
      await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: inviteKey(linkHash) }));
      await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: linkKey(email, linkHash) }));
    }
  }

  /** The items of partition `pk` whose sort key starts with `prefix`, read a page of 100 at a time. */
  private async *itemsUnder(pk: string, prefix: string): AsyncGenerator<Record<string, unknown>> {
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :prefix)`,
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) yield* page.Items ?? [];
  }

  /** Removes a user: the USER item first (what every session check reads), then the membership. */
  async remove(user: Pick<User, 'email' | 'account'>): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: userKey(user.email) }));
    await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: memberKey(user.account, user.email) }),
    );
  }

  /** The account's users, by email, read (strongly consistent, for the owner rule) a page of 100 at a time. */
  async members(account: string): Promise<Member[]> {
    const members: Member[] = [];
    for await (const i of this.itemsUnder(PARTITIONS.account.key(account), MEMBER.range.all()))
      members.push({
        email: String(i.email),
        created: String(i.created),
        status: i.status === 'active' ? 'active' : 'invited',
        role: storedRole(i.role),
      });
    return members;
  }

  /**
   * Sets a user's role: the USER item first (what every request's role check reads), then the
   * membership the list shows; repeating it after a failure between the two completes it.
   * Resolves false when the user is not (or no longer) in `account`.
   */
  async setRole(user: Pick<User, 'email' | 'account'>, role: Role): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: userKey(user.email),
          UpdateExpression: 'SET #r = :r',
          ConditionExpression: `attribute_exists(${PK}) AND account = :a`,
          ExpressionAttributeNames: { '#r': 'role' },
          ExpressionAttributeValues: { ':r': role, ':a': user.account },
        }),
      );
      await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: memberKey(user.account, user.email),
          UpdateExpression: 'SET #r = :r',
          ConditionExpression: `attribute_exists(${PK})`,
          ExpressionAttributeNames: { '#r': 'role' },
          ExpressionAttributeValues: { ':r': role },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Runs `change` holding the account's role lock, so that two changes that each leave one owner
   * (two owners removing or demoting each other at once) cannot together leave none: DynamoDB
   * Local stand-ins have no transactions, so the lock is a conditional write of a ROLE_LOCK item
   * with a lease of `ROLE_LOCK_MS` (a crashed holder's lock lapses), deleted after `change`.
   * @throws ConflictError (409) when another change holds it (a retry after `ROLE_LOCK_MS` at most succeeds)
   */
  async withRoleLock<T>(account: string, now: number, change: () => Promise<T>): Promise<T> {
    const token = randomInt(2 ** 40);
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...roleLockKey(account), type: 'ROLE_LOCK', token, until: now + ROLE_LOCK_MS },
          ConditionExpression: `attribute_not_exists(${PK}) OR #u < :now`,
          ExpressionAttributeNames: { '#u': 'until' },
          ExpressionAttributeValues: { ':now': now },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new ConflictError('Another change of users or roles is under way; try again in a few seconds.');
      throw error;
    }
    try {
      return await change();
    } finally {
      await this.conn.doc
        .send(
          new DeleteCommand({
            TableName: this.conn.table,
            Key: roleLockKey(account),
            ConditionExpression: '#t = :t',
            ExpressionAttributeNames: { '#t': 'token' },
            ExpressionAttributeValues: { ':t': token },
          }),
        )
        .catch((error: unknown) => {
          // Lapsed and taken by another change: that one's lock is not ours to delete.
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        });
    }
  }

  /**
   * Stores a one-time link by the SHA-256 of its token, and a pointer to it in
   * the user's partition (for `setPassword` to delete), both with the TTL
   * attribute; the pointer first, so no link exists without one.
   */
  async addInvite(hash: string, invite: Invite): Promise<void> {
    const pointer = linkKey(invite.email, hash);
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...pointer, type: 'LINK', ...ttlOf(invite.expires) },
      }),
    );
    await recordExpiry(this.conn, pointer[PK], pointer[SK], invite.expires);
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
    return Item ? toInvite(Item) : null;
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
      return Attributes ? toInvite(Attributes) : null;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw error;
    }
  }
}
