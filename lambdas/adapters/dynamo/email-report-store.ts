import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { ttlOf } from './expiry.js';
import { addressId } from '../../domain/email-report/unsubscribe-token.js';
import type { ReportKind } from '../../domain/email-report/period.js';
import type { EmailReportStore, Recipient, RecipientList } from '../../services/email-reports.js';

const RECIPIENTS_SK = PARTITIONS.emailReports.items.EMAIL_RECIPIENTS.key();
/** How long a send marker is kept: past its period's send window (one local day) with room to look back. */
const SENT_TTL_MS = PARTITIONS.emailReports.items.EMAIL_SENT.ttlSeconds * 1000;

const pk = (domain: string) => PARTITIONS.emailReports.key(domain);
const sentKey = (domain: string, kind: ReportKind, period: string, id: string) => ({
  [PK]: pk(domain),
  [SK]: PARTITIONS.emailReports.items.EMAIL_SENT.key(kind, period, id),
});

const recipientOf = (r: Record<string, unknown>): Recipient => ({
  email: String(r.email),
  weekly: r.weekly === true,
  monthly: r.monthly === true,
});

/**
 * Email report recipients and send markers (`docs/data-model.md`, items EMAIL_RECIPIENTS and
 * EMAIL_SENT): one item of at most 10 recipients per site, and one small marker per period and
 * address, written with a condition so that only one run sends it.
 */
export class DynamoEmailReportStore implements EmailReportStore {
  constructor(private readonly conn: DynamoConnection) {}

  async recipients(domain: string): Promise<RecipientList | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: pk(domain), [SK]: RECIPIENTS_SK },
        ConsistentRead: true,
      }),
    );
    if (!Item || typeof Item.key !== 'string') return null;
    const list = Array.isArray(Item.recipients) ? (Item.recipients as Array<Record<string, unknown>>) : [];
    return { recipients: list.map(recipientOf), key: Buffer.from(Item.key, 'base64') };
  }

  async setRecipients(domain: string, recipients: readonly Recipient[], nowMs: number): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: pk(domain), [SK]: RECIPIENTS_SK },
        // The token key is made once: tokens already mailed stay valid when the list changes.
        UpdateExpression: 'SET #t = :type, recipients = :r, updated = :now, #k = if_not_exists(#k, :key)',
        ExpressionAttributeNames: { '#t': 'type', '#k': 'key' },
        ExpressionAttributeValues: {
          ':type': 'EMAIL_RECIPIENTS',
          ':r': recipients.map((r) => ({ email: r.email, weekly: r.weekly, monthly: r.monthly })),
          ':now': nowMs,
          ':key': randomBytes(32).toString('base64'),
        },
      }),
    );
  }

  async removeRecipient(domain: string, id: string, nowMs: number): Promise<boolean> {
    // Read, filter, write back on the condition that nobody changed the list in between (then again).
    for (let attempt = 0; attempt < 3; attempt++) {
      const { Item } = await this.conn.doc.send(
        new GetCommand({
          TableName: this.conn.table,
          Key: { [PK]: pk(domain), [SK]: RECIPIENTS_SK },
          ConsistentRead: true,
        }),
      );
      if (!Item) return false;
      const list = (Array.isArray(Item.recipients) ? (Item.recipients as Array<Record<string, unknown>>) : []).map(
        recipientOf,
      );
      const kept = list.filter((r) => addressId(r.email) !== id);
      if (kept.length === list.length) return false;
      try {
        await this.conn.doc.send(
          new UpdateCommand({
            TableName: this.conn.table,
            Key: { [PK]: pk(domain), [SK]: RECIPIENTS_SK },
            UpdateExpression: 'SET recipients = :r, updated = :now',
            ConditionExpression: 'updated = :was',
            ExpressionAttributeValues: {
              ':r': kept,
              ':now': Math.max(nowMs, Number(Item.updated) + 1),
              ':was': Item.updated,
            },
          }),
        );
        return true;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new Error(`the recipients of ${domain} kept changing; try again`);
  }

  async claim(domain: string, kind: ReportKind, period: string, id: string, nowMs: number): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: {
            ...sentKey(domain, kind, period, id),
            type: 'EMAIL_SENT',
            state: 'sending',
            at: nowMs,
            ...ttlOf(nowMs + SENT_TTL_MS),
          },
          ConditionExpression: `attribute_not_exists(${SK})`,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async sent(domain: string, kind: ReportKind, period: string, id: string, messageId: string): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: sentKey(domain, kind, period, id),
        UpdateExpression: 'SET #s = :sent, message_id = :id',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':sent': 'sent', ':id': messageId.slice(0, 200) },
      }),
    );
  }

  async release(domain: string, kind: ReportKind, period: string, id: string): Promise<void> {
    await this.conn.doc
      .send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: sentKey(domain, kind, period, id),
          ConditionExpression: '#s = :sending',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':sending': 'sending' },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }
}
