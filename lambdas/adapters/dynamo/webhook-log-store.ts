import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PROVIDERS, type Provider } from '../../domain/payments/facts.js';
import type { WebhookStatus } from '../../services/account-settings.js';
import { PARTITIONS } from './items.js';

const logKey = (domain: string, provider: string) => ({ [PK]: PARTITIONS.webhookLog.key(domain), [SK]: provider });

/**
 * The last webhook of each provider for a site (`docs/data-model.md`, item
 * LAST_WEBHOOK): one small item per site and provider, overwritten by each
 * webhook, so its size never grows.
 */
export class DynamoWebhookLogStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Records a webhook's time, HTTP status and a one-line result (at most 200 characters). */
  async record(domain: string, provider: Provider, status: WebhookStatus): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          ...logKey(domain, provider),
          type: 'LAST_WEBHOOK',
          ts: status.ts,
          status: status.status,
          result: status.result.slice(0, 200),
        },
      }),
    );
  }

  /** The last webhook of each provider that sent one. */
  async lastWebhooks(domain: string): Promise<Partial<Record<Provider, WebhookStatus>>> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.webhookLog.key(domain) },
        Limit: PROVIDERS.length,
      }),
    );
    return Object.fromEntries(
      Items.map((i) => [String(i[SK]), { ts: String(i.ts), status: Number(i.status), result: String(i.result) }]),
    );
  }
}
