import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { IMPORTED_METRICS } from '../../domain/imported/aggregate.js';
import { deletePartition, lastRebuildGeneration, rebuildStateKey } from './rebuild-store.js';
import { DynamoShareLinkStore } from './share-link-store.js';
import { siteDeletionSchema, type SiteDeletion, type SiteDeletionStore } from '../../services/site-deletion.js';

/** Every pending deletion in one partition: a handful at most, listed with one Query. */
const DELETIONS_PK = PARTITIONS.siteDeletions.key();
export const deletionKey = (domain: string) => ({
  [PK]: DELETIONS_PK,
  [SK]: PARTITIONS.siteDeletions.items.SITE_DELETION.key(domain),
});
const siteKey = (domain: string) => ({ [PK]: PARTITIONS.sites.key(), [SK]: PARTITIONS.sites.items.SITE.key(domain) });
const lookKey = (domain: string) => ({ [PK]: PARTITIONS.looks.key(), [SK]: PARTITIONS.looks.items.LOOK.key(domain) });

/** The configuration partitions keyed by the domain itself, not a generation (`docs/data-model.md`). */
const configPartitions = (domain: string) => [
  PARTITIONS.provider.key(domain),
  PARTITIONS.webhookLog.key(domain),
  PARTITIONS.importJobs.key(domain),
  PARTITIONS.emailReports.key(domain),
  // A Plausible import's days (`footfall import plausible`).
  ...IMPORTED_METRICS.map((metric) => PARTITIONS.imported.key(domain, metric)),
];

/**
 * A site deletion's checkpoint (item SITE_DELETION, `docs/data-model.md`; < 1 KB:
 * a few generation numbers and counters) and the configuration items a
 * deletion removes first: the SITE item, its LOOK item, its shared links, its provider
 * connections, its webhook log, its email report recipients and send markers, and its imported days.
 */
export class DynamoSiteDeletionStore implements SiteDeletionStore {
  constructor(private readonly conn: DynamoConnection) {}

  async get(domain: string): Promise<SiteDeletion | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: deletionKey(domain), ConsistentRead: true }),
    );
    return Item ? siteDeletionSchema.parse(Item) : null;
  }

  async pending(): Promise<SiteDeletion[]> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': DELETIONS_PK },
        ConsistentRead: true,
        Limit: 100,
      }),
    );
    return Items.map((item) => siteDeletionSchema.parse(item));
  }

  /** @returns false when a deletion of the domain is already recorded (the caller resumes it) */
  async begin(deletion: SiteDeletion): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...deletionKey(deletion.domain), type: 'SITE_DELETION', ...deletion },
          ConditionExpression: `attribute_not_exists(${PK})`,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async save(deletion: SiteDeletion): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...deletionKey(deletion.domain), type: 'SITE_DELETION', ...deletion },
      }),
    );
  }

  async finish(domain: string): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: deletionKey(domain) }));
  }

  lastGeneration(domain: string): Promise<number> {
    return lastRebuildGeneration(this.conn, domain);
  }

  async removeSite(domain: string): Promise<number> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: siteKey(domain) }));
    // Its LOOK item (who looked at its reports) shares the LOOKS partition with every site's: deleted by its key.
    const look = await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: lookKey(domain), ReturnValues: 'ALL_OLD' }),
    );
    let deleted = look.Attributes ? 2 : 1;
    // Shared links first, each by its revocation (lookup item, then its entry in the site's list): the lookup
    // items are keyed by the token's hash, not the domain, so deleting the site's partitions alone would miss them.
    const shares = new DynamoShareLinkStore(this.conn);
    for (const link of await shares.list(domain)) if (await shares.revoke(domain, link.id)) deleted += 2;
    for (const pk of configPartitions(domain)) deleted += await deletePartition(this.conn, pk);
    return deleted;
  }

  async removeRebuildState(domain: string): Promise<number> {
    return deletePartition(this.conn, rebuildStateKey(domain)[PK]);
  }
}
