import { GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { DATA_LAYOUT, domainSchema, type SiteConfig, type SiteSettings } from '../../domain/site.js';
import { AlreadyExistsError, NotFoundError } from '../../domain/errors.js';
import type { SecretBox, SiteGenerations } from '../../ports.js';
import { PARTITIONS } from './items.js';
import { deletionKey } from './site-deletion-store.js';
import { SITE, SITES_PK, siteKey, siteOfItem } from './site-item.js';
import { DynamoSiteGenerations } from './site-generations.js';
import { DynamoProviderSecrets } from './provider-secrets.js';

export { GenerationConflictError } from './site-generations.js';

/** An account: the owner of sites and API keys. */
export interface Account {
  id: string;
  created: string;
}

const accountKey = (id: string) => ({ [PK]: PARTITIONS.account.key(id), [SK]: PARTITIONS.account.items.ACCOUNT.key() });

/**
 * Accounts and sites in the single table (`docs/data-model.md`, items ACCOUNT and SITE), with the
 * rebuild's generation steps on the SITE item (`DynamoSiteGenerations`) and the provider connections
 * (item PROVIDER, `DynamoProviderSecrets`) passed through, so one store serves every wiring. Webhook
 * signing secrets go through `secrets` (`docs/security.md` "Webhook signing secrets at rest"): only the
 * functions that write or read them are given one.
 */
export class DynamoConfigStore implements SiteGenerations {
  private readonly generations: DynamoSiteGenerations;
  private readonly providers: DynamoProviderSecrets;

  /** @param secrets the box of webhook signing secrets: only the functions that write or read them are given one */
  constructor(
    private readonly conn: DynamoConnection,
    secrets?: SecretBox,
  ) {
    this.generations = new DynamoSiteGenerations(conn, this);
    this.providers = new DynamoProviderSecrets(conn, this, secrets);
  }

  /** @throws AlreadyExistsError when the account exists */
  async addAccount(id: string, now: Date): Promise<Account> {
    const account = { id, created: now.toISOString() };
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...accountKey(id), ...account },
          ConditionExpression: `attribute_not_exists(${PK})`,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new AlreadyExistsError(`account ${id} already exists`);
      throw error;
    }
    return account;
  }

  async getAccount(id: string): Promise<Account | null> {
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: accountKey(id) }));
    return Item ? { id: String(Item.id), created: String(Item.created) } : null;
  }

  /**
   * @throws NotFoundError when the account does not exist
   * @throws AlreadyExistsError when the site exists, or a deletion of it is still running
   */
  async addSite(input: SiteConfig): Promise<SiteConfig> {
    if (!(await this.getAccount(input.account))) throw new NotFoundError(`account ${input.account} does not exist`);
    // A deletion still running would delete the new site's data with the old one's (`docs/deploy.md`, "Deleting a site").
    const { Item: deleting } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: deletionKey(input.domain), ConsistentRead: true }),
    );
    if (deleting)
      throw new AlreadyExistsError(
        `site ${input.domain} is being deleted; add it again once \`footfall sites delete ${input.domain}\` has finished`,
      );
    // A new site has no data yet: it starts in this release's layout.
    const site = {
      ...input,
      layout: input.layout ?? DATA_LAYOUT,
    };
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...siteKey(site.domain), ...site },
          ConditionExpression: `attribute_not_exists(${PK})`,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new AlreadyExistsError(`site ${site.domain} already exists`);
      throw error;
    }
    return site;
  }

  async getSite(domain: string): Promise<SiteConfig | null> {
    // Sites are added as domain names (domainSchema): anything else (a path segment
    // of 5,000 characters, `..%2F..`) cannot be one, and may not even fit in a key
    // (DynamoDB refuses sort keys over 1 KiB with a ValidationException, i.e. a 503).
    if (!domainSchema.safeParse(domain).success) return null;
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: siteKey(domain) }));
    return Item ? siteOfItem(Item) : null;
  }

  /** Every site, ordered by domain. */
  async listSites(): Promise<SiteConfig[]> {
    const sites: SiteConfig[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :prefix)`,
      ExpressionAttributeValues: { ':pk': SITES_PK, ':prefix': SITE.range.all() },
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) sites.push(siteOfItem(item));
    }
    return sites;
  }

  /**
   * Changes a site's settings (attribution model, lookback window, timezone, rate limit).
   * @throws NotFoundError when the site does not exist
   */
  async updateSite(domain: string, changes: SiteSettings): Promise<SiteConfig> {
    const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
    if (entries.length === 0) {
      const site = await this.getSite(domain);
      if (!site) throw new NotFoundError(`site ${domain} does not exist`);
      return site;
    }
    try {
      const { Attributes } = await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: siteKey(domain),
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: `attribute_exists(${PK})`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return siteOfItem(Attributes ?? {});
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new NotFoundError(`site ${domain} does not exist`);
      throw error;
    }
  }

  /** `DynamoSiteGenerations.beginBuilding` */
  beginBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generations.beginBuilding(domain, generation);
  }

  /** `DynamoSiteGenerations.switchGeneration` */
  switchGeneration(domain: string, generation: number): Promise<SiteConfig> {
    return this.generations.switchGeneration(domain, generation);
  }

  /** `DynamoSiteGenerations.abandonBuilding` */
  abandonBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generations.abandonBuilding(domain, generation);
  }

  /** `DynamoSiteGenerations.clearRetired` */
  clearRetired(domain: string, generation: number): Promise<SiteConfig> {
    return this.generations.clearRetired(domain, generation);
  }

  /** `DynamoProviderSecrets.connectProvider` */
  connectProvider(domain: string, provider: string, secret: string, now: Date): Promise<void> {
    return this.providers.connectProvider(domain, provider, secret, now);
  }

  /** `DynamoProviderSecrets.disconnectProvider` */
  disconnectProvider(domain: string, provider: string): Promise<void> {
    return this.providers.disconnectProvider(domain, provider);
  }

  /** `DynamoProviderSecrets.providerSecret` */
  providerSecret(domain: string, provider: string): Promise<string | null> {
    return this.providers.providerSecret(domain, provider);
  }

  /** `DynamoProviderSecrets.resealProviderSecrets` */
  resealProviderSecrets(retired: (sealed: string) => boolean): Promise<{ resealed: number; kept: number }> {
    return this.providers.resealProviderSecrets(retired);
  }

  /** `DynamoProviderSecrets.listProviders` */
  listProviders(domain: string): Promise<Array<{ provider: string; connected: string }>> {
    return this.providers.listProviders(domain);
  }
}
