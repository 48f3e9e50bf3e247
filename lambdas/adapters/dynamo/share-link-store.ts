import { DeleteCommand, GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { PARTITIONS } from './items.js';
import type { ShareLink, ShareUnlock } from '../../domain/share-link.js';

const lookupKey = (hash: string) => ({
  [PK]: PARTITIONS.shareLink.key(hash),
  [SK]: PARTITIONS.shareLink.items.SHARE_LINK.key(),
});
const infoKey = (site: string, id: string) => ({
  [PK]: PARTITIONS.shareLinks.key(site),
  [SK]: PARTITIONS.shareLinks.items.SHARE_INFO.key(id),
});
const unlockKey = (hash: string) => ({
  [PK]: PARTITIONS.shareUnlock.key(hash),
  [SK]: PARTITIONS.shareUnlock.items.SHARE_UNLOCK.key(),
});

const toLink = (i: Record<string, unknown>): ShareLink => ({
  id: String(i.id),
  account: String(i.account),
  site: String(i.site),
  site_created: String(i.site_created),
  name: String(i.name),
  created: String(i.created),
  password_hash: typeof i.password_hash === 'string' ? i.password_hash : null,
});

/**
 * Shared links in the single table: SHARE_LINK by the token's hash (what a
 * shared view's request reads, strongly consistent, so a revoked link fails
 * on its very next request), SHARE_INFO by site and id (what settings list),
 * and SHARE_UNLOCK by the hash of a protected link's unlock token, with TTL.
 */
export class DynamoShareLinkStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Stores a new link under the hash of its token (the lookup item first: the list never names a link that cannot be read). */
  async create(hash: string, link: ShareLink): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({ TableName: this.conn.table, Item: { ...lookupKey(hash), type: 'SHARE_LINK', ...link } }),
    );
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...infoKey(link.site, link.id), type: 'SHARE_INFO', ...link, hash },
      }),
    );
  }

  /** A site's links, read a page of 100 at a time. */
  async list(site: string): Promise<ShareLink[]> {
    const links: ShareLink[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.shareLinks.key(site) },
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const i of page.Items ?? []) links.push(toLink(i));
    return links;
  }

  /** The link of a token's hash, or null (unknown or revoked). */
  async byHash(hash: string): Promise<ShareLink | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: lookupKey(hash), ConsistentRead: true }),
    );
    return Item ? toLink(Item) : null;
  }

  /** Deletes a site's link: its token and unlocks fail from the next request on. Resolves false for an unknown id. */
  async revoke(site: string, id: string): Promise<boolean> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: infoKey(site, id), ConsistentRead: true }),
    );
    if (!Item) return false;
    // The lookup item first: that is what a shared view's requests read.
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: lookupKey(String(Item.hash)) }));
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: infoKey(site, id) }));
    return true;
  }

  async addUnlock(hash: string, unlock: ShareUnlock): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...unlockKey(hash), type: 'SHARE_UNLOCK', ...unlock, ...ttlOf(unlock.expires) },
      }),
    );
    await recordExpiry(
      this.conn,
      PARTITIONS.shareUnlock.key(hash),
      PARTITIONS.shareUnlock.items.SHARE_UNLOCK.key(),
      unlock.expires,
    );
  }

  async getUnlock(hash: string): Promise<ShareUnlock | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: unlockKey(hash), ConsistentRead: true }),
    );
    return Item ? { link: String(Item.link), expires: Number(Item.expires) } : null;
  }
}
