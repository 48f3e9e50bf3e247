import { GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK } from '../table.js';
import { PARTITIONS } from '../items.js';
import { BULK_CONCURRENCY, batchWrite } from '../batch.js';
import type { Customer } from '../../../domain/payments/customer.js';
import type { Provider } from '../../../domain/payments/facts.js';
import { customerItem, customerItemKey, customerOf } from './payment-items.js';
import { putIfVersion } from './payment-store-records.js';

/**
 * A site's customers (CUSTOMER items, `docs/data-model.md`): one per provider's customer, the
 * subscription status and first payments the payment use cases keep (`docs/payments.md`). A write
 * is conditioned on the version read (`ver`), as several deliveries may race on it.
 */
export class CustomerRecords {
  constructor(private readonly conn: DynamoConnection) {}

  /** The stored customer, read strongly consistent; null when there is none. */
  async getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: customerItemKey(site, provider, customerId),
        ConsistentRead: true,
      }),
    );
    return Item ? customerOf(Item) : null;
  }

  /** Writes a customer if its stored `ver` is still `customer.ver - 1`. Returns false on a lost race. */
  async putCustomer(customer: Customer): Promise<boolean> {
    return putIfVersion(this.conn, customerItem(customer), 'ver', customer.ver === 1 ? null : customer.ver - 1);
  }

  /** Every customer of a site (retention), its partition paged at 1 MB. */
  async listCustomers(site: string): Promise<Customer[]> {
    const out: Customer[] = [];
    for await (const page of paginateQuery(
      { client: this.conn.doc },
      {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.customer.key(site) },
      },
    )) {
      for (const item of page.Items ?? []) out.push(customerOf(item));
    }
    return out;
  }

  /**
   * Writes customers no other writer is changing, in bulk with
   * BatchWriteItem (the report benchmark's loader): the CUSTOMER items
   * `putCustomer` leaves, unconditionally.
   */
  async bulkLoadCustomers(customers: readonly Customer[]): Promise<void> {
    await batchWrite(
      this.conn,
      customers.map((c) => ({ PutRequest: { Item: customerItem(c) } })),
      BULK_CONCURRENCY,
    );
  }
}
