import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { DATA_LAYOUT, domainSchema, siteConfigSchema, type SiteConfig, type SiteSettings } from '../../domain/site.js';
import { AlreadyExistsError, NotFoundError } from '../../domain/errors.js';
import type { SecretBox, SiteGenerations } from '../../ports.js';
import { PARTITIONS } from './items.js';
import { deletionKey } from './site-deletion-store.js';

/** An account: the owner of sites and API keys. */
export interface Account {
  id: string;
  created: string;
}

/** A rebuild step found the SITE item in another state than the one it starts from (`docs/rebuild.md`). */
export class GenerationConflictError extends Error {
  constructor(
    readonly domain: string,
    readonly expected: string,
    readonly site: SiteConfig,
  ) {
    const state = [
      `live generation ${site.generation ?? 0}`,
      site.building !== undefined ? `generation ${site.building} being built` : null,
      site.retired !== undefined ? `generation ${site.retired} retired, not yet deleted` : null,
    ]
      .filter(Boolean)
      .join(', ');
    super(`${domain}: expected ${expected}, found ${state}`);
  }
}

const accountKey = (id: string) => ({ [PK]: PARTITIONS.account.key(id), [SK]: PARTITIONS.account.items.ACCOUNT.key() });
// All sites share one partition: a self-hosted install has a handful, and the
// ingest path reads them through an in-memory cache.
const SITES_PK = PARTITIONS.sites.key();
const { SITE } = PARTITIONS.sites.items;
const siteKey = (domain: string) => ({ [PK]: SITES_PK, [SK]: SITE.key(domain) });

function toSite(item: Record<string, unknown>): SiteConfig {
  return siteConfigSchema.parse(item);
}

function stripKeys(item: Record<string, unknown>): Record<string, unknown> {
  const { [PK]: _pk, [SK]: _sk, ...rest } = item;
  return rest;
}

/** A provider connected to a site: the secret its webhooks are signed with. */
const providerKey = (domain: string, provider: string) => ({
  [PK]: PARTITIONS.provider.key(domain),
  [SK]: PARTITIONS.provider.items.PROVIDER.key(provider),
});

/**
 * Accounts, sites and provider connections in the single table
 * (`docs/data-model.md`, items ACCOUNT, SITE and PROVIDER). Webhook signing
 * secrets go through `secrets` (`docs/security.md` "Webhook signing secrets at rest"): only the functions that write or
 * read them are given one.
 */
export class DynamoConfigStore implements SiteGenerations {
  constructor(
    private readonly conn: DynamoConnection,
    private readonly secrets?: SecretBox,
  ) {}

  private secretBox(): SecretBox {
    if (!this.secrets) throw new Error('DynamoConfigStore: webhook secrets need a SecretBox');
    return this.secrets;
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
    return Item ? toSite(stripKeys(Item)) : null;
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
      for (const item of page.Items ?? []) sites.push(toSite(stripKeys(item)));
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
      return toSite(stripKeys(Attributes ?? {}));
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new NotFoundError(`site ${domain} does not exist`);
      throw error;
    }
  }

  /**
   * One conditional write on the SITE item (`docs/rebuild.md`): the
   * generation fields a rebuild moves through. Each returns the site as
   * written, or throws GenerationConflictError when the item is not in the
   * state the step starts from (another rebuild, a finished or abandoned one).
   */
  private async generationStep(
    domain: string,
    update: string,
    condition: string,
    values: Record<string, number | boolean>,
    expected: string,
  ): Promise<SiteConfig> {
    try {
      const { Attributes } = await this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: siteKey(domain),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(${PK}) AND ${condition}`,
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toSite(stripKeys(Attributes ?? {}));
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const site = await this.getSite(domain);
      if (!site) throw new NotFoundError(`site ${domain} does not exist`);
      throw new GenerationConflictError(domain, expected, site);
    }
  }

  /** Marks `generation` as being built: refused while another one is built or a replaced one awaits deletion. */
  beginBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(
      domain,
      'SET building = :g',
      'attribute_not_exists(building) AND attribute_not_exists(retired)',
      { ':g': generation },
      'no rebuild running and none to clean up',
    );
  }

  /**
   * Makes the built generation live and the live one retired, in one write:
   * readers read the old generation before it and the new one after.
   */
  switchGeneration(domain: string, generation: number): Promise<SiteConfig> {
    // The generation was written by this code: its layout is this release's (`DATA_LAYOUT`).
    return this.generationStep(
      domain,
      'SET retired = if_not_exists(generation, :zero), generation = :g, layout = :layout REMOVE building',
      'building = :g AND attribute_not_exists(retired)',
      { ':g': generation, ':zero': 0, ':layout': DATA_LAYOUT },
      `generation ${generation} being built`,
    );
  }

  /** Gives up the generation being built: no writer writes it any more, and it is left to be deleted as `retired`. */
  abandonBuilding(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(
      domain,
      'SET retired = :g REMOVE building',
      'building = :g AND attribute_not_exists(retired)',
      { ':g': generation },
      `generation ${generation} being built`,
    );
  }

  /** Forgets the retired generation once its items are deleted. */
  clearRetired(domain: string, generation: number): Promise<SiteConfig> {
    return this.generationStep(
      domain,
      'REMOVE retired',
      'retired = :g',
      { ':g': generation },
      `generation ${generation} retired`,
    );
  }

  /**
   * Stores (or replaces) the webhook signing secret of a provider for a site,
   * sealed to the site and provider in attribute `sealed_secret`; the item of
   * a secret stored before encryption (plaintext `secret`) is replaced whole.
   * @throws NotFoundError for an unknown site
   */
  async connectProvider(domain: string, provider: string, secret: string, now: Date): Promise<void> {
    const box = this.secretBox();
    if (!(await this.getSite(domain))) throw new NotFoundError(`site ${domain} does not exist`);
    const sealed = await box.seal(secret, { site: domain, provider });
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          ...providerKey(domain, provider),
          type: 'PROVIDER',
          sealed_secret: sealed,
          connected: now.toISOString(),
        },
      }),
    );
  }

  /** Forgets a provider's secret for a site: its webhooks are refused from the next one. */
  async disconnectProvider(domain: string, provider: string): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: providerKey(domain, provider) }));
  }

  /**
   * The webhook secret of a provider for a site, or null when it is not
   * connected. Items written before secrets were sealed hold a plaintext
   * `secret`: still read (`docs/security.md` "Migration": connecting the
   * provider again seals it).
   * @throws SecretUnreadableError when the sealed secret does not open (tampered, or copied from another site or provider)
   */
  async providerSecret(domain: string, provider: string): Promise<string | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: providerKey(domain, provider), ConsistentRead: true }),
    );
    if (!Item) return null;
    if (typeof Item.sealed_secret === 'string')
      return this.secretBox().open(Item.sealed_secret, { site: domain, provider });
    return typeof Item.secret === 'string' ? Item.secret : null;
  }

  /**
   * Re-seals, with this store's box, every provider secret of every site that `retired` says is
   * sealed under a key being given up (`docs/deploy.md`, "Webhook secrets leave the KMS key"): each is
   * opened (by the box's legacy opener) and sealed again, then written only if its item still holds
   * the sealed string that was read, so a secret connected again meanwhile is not overwritten.
   * Resumable: a secret already moved is not `retired` any more. Returns how many were moved and kept.
   * @throws SecretUnreadableError when a retired secret does not open (its key is gone): nothing after it is moved
   */
  async resealProviderSecrets(retired: (sealed: string) => boolean): Promise<{ resealed: number; kept: number }> {
    const box = this.secretBox();
    let resealed = 0;
    let kept = 0;
    for (const site of await this.listSites()) {
      for (const { provider } of await this.listProviders(site.domain)) {
        const key = providerKey(site.domain, provider);
        const { Item } = await this.conn.doc.send(
          new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }),
        );
        const sealed: unknown = Item?.sealed_secret;
        if (typeof sealed !== 'string' || !retired(sealed)) {
          kept += 1;
          continue;
        }
        const context = { site: site.domain, provider };
        const again = await box.seal(await box.open(sealed, context), context);
        try {
          await this.conn.doc.send(
            new UpdateCommand({
              TableName: this.conn.table,
              Key: key,
              UpdateExpression: 'SET sealed_secret = :new',
              ConditionExpression: 'sealed_secret = :old',
              ExpressionAttributeValues: { ':new': again, ':old': sealed },
            }),
          );
          resealed += 1;
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
          kept += 1;
        }
      }
    }
    return { resealed, kept };
  }

  /** The providers connected to a site, with when (never the secrets). */
  async listProviders(domain: string): Promise<Array<{ provider: string; connected: string }>> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.provider.key(domain) },
      }),
    );
    return Items.map((i) => ({ provider: String(i[SK]), connected: String(i.connected) }));
  }
}
