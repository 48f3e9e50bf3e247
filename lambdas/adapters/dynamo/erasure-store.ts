import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { deletePartition, lastRebuildGeneration } from './rebuild-store.js';
import { visitorPk } from './visit-store.js';
import type { ErasureRecord, ErasureStore, StoredItem } from '../../services/erasure.js';

/** A site's erasure audit records: one item each, < 300 B, counts only (`docs/security.md`). */
export const erasuresPk = (domain: string) => PARTITIONS.erasures.key(domain);

/** What an erasure reads and rewrites in the table (`erasePerson`). */
export class DynamoErasureStore implements ErasureStore {
  constructor(private readonly conn: DynamoConnection) {}

  private async partition(pk: string): Promise<StoredItem[]> {
    const items: StoredItem[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) items.push(...(page.Items ?? []));
    return items;
  }

  payments(ns: string): Promise<StoredItem[]> {
    return this.partition(PARTITIONS.payment.key(ns));
  }

  customers(ns: string): Promise<StoredItem[]> {
    return this.partition(PARTITIONS.customer.key(ns));
  }

  async put(item: StoredItem): Promise<void> {
    await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: item }));
  }

  async replace(old: StoredItem, next: StoredItem): Promise<void> {
    await this.put(next);
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: { [PK]: old[PK], [SK]: old[SK] } }));
  }

  deleteVisitor(ns: string, visitor: string): Promise<number> {
    return deletePartition(this.conn, visitorPk(ns, visitor));
  }

  lastGeneration(domain: string): Promise<number> {
    return lastRebuildGeneration(this.conn, domain);
  }

  async audit(domain: string, record: ErasureRecord): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          [PK]: erasuresPk(domain),
          [SK]: PARTITIONS.erasures.items.ERASURE.key(Date.parse(record.at), randomUUID()),
          type: 'ERASURE',
          ...record,
        },
      }),
    );
  }
}
