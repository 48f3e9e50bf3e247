import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import type { SiteConfig } from '../../domain/site.js';
import { NotFoundError } from '../../domain/errors.js';
import type { SecretBox, SiteDirectory } from '../../ports.js';
import { PARTITIONS } from './items.js';

/** A provider connected to a site: the secret its webhooks are signed with. */
const providerKey = (domain: string, provider: string) => ({
  [PK]: PARTITIONS.provider.key(domain),
  [SK]: PARTITIONS.provider.items.PROVIDER.key(provider),
});

/**
 * The provider connections of sites in the single table (`docs/data-model.md`, item PROVIDER). Webhook
 * signing secrets go through `secrets` (`docs/security.md` "Webhook signing secrets at rest"): only the
 * functions that write or read them are given one. `sites` says which sites exist.
 */
export class DynamoProviderSecrets {
  constructor(
    private readonly conn: DynamoConnection,
    private readonly sites: SiteDirectory & { listSites(): Promise<SiteConfig[]> },
    private readonly secrets?: SecretBox,
  ) {}

  private secretBox(): SecretBox {
    if (!this.secrets) throw new Error('DynamoConfigStore: webhook secrets need a SecretBox');
    return this.secrets;
  }

  /**
   * Stores (or replaces) the webhook signing secret of a provider for a site,
   * sealed to the site and provider in attribute `sealed_secret`; the item of
   * a secret stored before encryption (plaintext `secret`) is replaced whole.
   * @throws NotFoundError for an unknown site
   */
  async connectProvider(domain: string, provider: string, secret: string, now: Date): Promise<void> {
    const box = this.secretBox();
    if (!(await this.sites.getSite(domain))) throw new NotFoundError(`site ${domain} does not exist`);
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
    for (const site of await this.sites.listSites()) {
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
