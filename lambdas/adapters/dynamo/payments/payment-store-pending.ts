import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK } from '../table.js';
import { PARTITIONS } from '../items.js';
import { BULK_CONCURRENCY, batchWrite } from '../batch.js';
import type { Payment } from '../../../domain/payments/payment.js';
import { paymentKey } from '../../../domain/payments/contribution.js';
import type { PaymentRef } from '../../../ports.js';
import { pendingItem, pendingKey, pendingOf } from './payment-items.js';

/**
 * Payments waiting for their visitor's visits (PAYMENT_PENDING items, `docs/data-model.md`): each is
 * credited again until its `until` (ms), as its visits may not be sessionized yet (`docs/payments.md`).
 */
export class PendingCredits {
  constructor(private readonly conn: DynamoConnection) {}

  /** Marks a payment to be credited again until `until` (ms). */
  async markPending(site: string, payment: Payment, until: number): Promise<void> {
    await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: pendingItem(site, payment, until) }));
  }

  /** Forgets that a payment was pending (nothing when it was not). */
  async clearPending(site: string, payment: Payment): Promise<void> {
    // Most payments were never pending: a read is cheaper than a delete of nothing.
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: pendingKey(site, paymentKey(payment)), ConsistentRead: true }),
    );
    if (Item)
      await this.conn.doc.send(
        new DeleteCommand({ TableName: this.conn.table, Key: pendingKey(site, paymentKey(payment)) }),
      );
  }

  /** Payments marked pending for a site, with the time (ms) until which they are retried. */
  async listPending(site: string): Promise<Array<PaymentRef & { until: number }>> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.paymentPending.key(site) },
      }),
    );
    return Items.map(pendingOf);
  }

  /** Marks payments pending (`markPending`) and clears others, with BatchWriteItem. */
  async bulkPending(
    site: string,
    mark: ReadonlyArray<{ payment: Payment; until: number }>,
    clear: readonly Payment[],
  ): Promise<void> {
    await batchWrite(
      this.conn,
      [
        ...mark.map(({ payment, until }) => ({ PutRequest: { Item: pendingItem(site, payment, until) } })),
        ...clear.map((p) => ({ DeleteRequest: { Key: pendingKey(site, paymentKey(p)) } })),
      ],
      BULK_CONCURRENCY,
    );
  }
}
