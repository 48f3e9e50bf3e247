import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { PROVIDERS, type Provider } from '../../domain/payments/facts.js';
import type { RejectedWebhooks, WebhookLog, WebhookStatus } from '../../services/account-settings.js';

const REJECTED_SUFFIX = '#rejected';
const logKey = (domain: string, sk: string) => ({ [PK]: PARTITIONS.webhookLog.key(domain), [SK]: sk });
const isProvider = (p: string): p is Provider => (PROVIDERS as readonly string[]).includes(p);

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
          ...logKey(domain, provider),
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
        Key: logKey(domain, `${provider}${REJECTED_SUFFIX}`),
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
      const provider = sk.endsWith(REJECTED_SUFFIX) ? sk.slice(0, -REJECTED_SUFFIX.length) : sk;
      if (!isProvider(provider)) continue;
      if (sk === provider) last.set(provider, { ts: String(i.ts), status: Number(i.status), result: String(i.result) });
      else rejected.set(provider, { count: Number(i.n), last_ts: String(i.last_ts) });
    }
    return { last, rejected };
  }
}
