import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { PROVIDERS, type Provider } from '../../domain/payments/facts.js';
import type { RejectedWebhooks, WebhookLog, WebhookStatus } from '../../services/account-settings.js';

const { LAST_WEBHOOK, REJECTED_WEBHOOKS } = PARTITIONS.webhookLog.items;
const logKey = (domain: string, sk: string) => ({ [PK]: PARTITIONS.webhookLog.key(domain), [SK]: sk });

/**
 * Per site and provider (`docs/data-model.md`, items LAST_WEBHOOK and
 * REJECTED_WEBHOOKS): the last delivery that passed the signature check and
 * its result, overwritten by each; and a count of the deliveries refused for
 * their signature, with the time of the last. Two small items per site and
 * provider, whatever the traffic.
 */
export class DynamoWebhookLogStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Records a verified webhook's time, HTTP status and a one-line result (at most 200 characters). */
  async record(domain: string, provider: Provider, status: WebhookStatus): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          ...logKey(domain, LAST_WEBHOOK.key(provider)),
          type: 'LAST_WEBHOOK',
          ts: status.ts,
          status: status.status,
          result: status.result.slice(0, 200),
        },
      }),
    );
  }

  /** Counts one delivery refused for its signature (missing, wrong, stale or malformed) at `ts` (ISO 8601). */
  async recordRejected(domain: string, provider: Provider, ts: string): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: logKey(domain, REJECTED_WEBHOOKS.key(provider)),
        UpdateExpression: 'ADD n :one SET last_ts = :ts, #t = :type',
        ExpressionAttributeNames: { '#t': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':ts': ts, ':type': 'REJECTED_WEBHOOKS' },
      }),
    );
  }

  /** The last verified webhook and the refused count of each provider that has them. */
  async webhookLog(domain: string): Promise<WebhookLog> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.webhookLog.key(domain) },
        Limit: 2 * PROVIDERS.length,
      }),
    );
    const last = new Map<Provider, WebhookStatus>();
    const rejected = new Map<Provider, RejectedWebhooks>();
    for (const i of Items) {
      const sk = String(i[SK]);
      const provider = PROVIDERS.find((p) => sk === LAST_WEBHOOK.key(p) || sk === REJECTED_WEBHOOKS.key(p));
      if (!provider) continue;
      if (sk === LAST_WEBHOOK.key(provider))
        last.set(provider, { ts: String(i.ts), status: Number(i.status), result: String(i.result) });
      else rejected.set(provider, { count: Number(i.n), last_ts: String(i.last_ts) });
    }
    return { last, rejected };
  }
}
