import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { deletePartition, lastRebuildGeneration } from './rebuild-store.js';
import { visitorPk } from './visit-store.js';
import type { ErasureRecord, ErasureStore, StoredItem } from '../../services/erasure.js';
import { pendingErasureSchema, type ErasureQueue, type PendingErasure } from '../../services/erasure-requests.js';

/** A site's erasure audit records: one item each, < 300 B, counts only (`docs/security.md`). */
export const erasuresPk = (domain: string) => PARTITIONS.erasures.key(domain);

/** Every pending erasure request in one partition, sorted by site then time: a handful at a time. */
const REQUESTS_PK = PARTITIONS.erasureRequests.key();
const requestKey = (r: Pick<PendingErasure, 'domain' | 'requested' | 'id'>) => ({
  [PK]: REQUESTS_PK,
  [SK]: PARTITIONS.erasureRequests.items.ERASURE_REQUEST.key(r.domain, r.requested, r.id),
});
/** Fields of an ERASURE record (the item's keys and type left out). */
const RECORD_FIELDS = [
  'at',
  'kind',
  'visitors',
  'payments',
  'customers',
  'visit_items',
  'archive_files',
  'archive_events',
  'generation',
] as const;

/**
 * What an erasure reads and rewrites in the table (`erasePerson`), the queue of
 * the app's requests (item ERASURE_REQUEST) and the audit records (ERASURE).
 */
export class DynamoErasureStore implements ErasureStore, ErasureQueue {
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

  async replaceCustomer(old: StoredItem, next: StoredItem): Promise<void> {
    await this.put({
      ...next,
      [SK]: PARTITIONS.customer.items.CUSTOMER.key(String(next.provider), String(next.customer_id)),
    });
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: { [PK]: old[PK], [SK]: old[SK] } }));
  }

  deleteVisitor(ns: string, visitor: string): Promise<number> {
    return deletePartition(this.conn, visitorPk(ns, visitor));
  }

  lastGeneration(domain: string): Promise<number> {
    return lastRebuildGeneration(this.conn, domain);
  }

  async add(request: PendingErasure): Promise<void> {
    await this.save(request);
  }

  async save(request: PendingErasure): Promise<void> {
    await this.put({ ...requestKey(request), type: 'ERASURE_REQUEST', ...request });
  }

  async pending(domain?: string): Promise<PendingErasure[]> {
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: domain === undefined ? `${PK} = :pk` : `${PK} = :pk AND begins_with(${SK}, :site)`,
      ExpressionAttributeValues: {
        ':pk': REQUESTS_PK,
        ...(domain === undefined
          ? {}
          : { ':site': PARTITIONS.erasureRequests.items.ERASURE_REQUEST.range.site(domain) }),
      },
      ConsistentRead: true,
      Limit: 25,
    };
    const requests: PendingErasure[] = [];
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) requests.push(pendingErasureSchema.parse(item));
    return requests.sort((a, b) => a.requested - b.requested);
  }

  async finish(request: PendingErasure, record: ErasureRecord): Promise<void> {
    await this.audit(request.domain, record);
    await this.drop(request);
  }

  async drop(request: PendingErasure): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: requestKey(request) }));
  }

  async records(domain: string, limit: number): Promise<ErasureRecord[]> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': erasuresPk(domain) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return Items.map((item) => Object.fromEntries(RECORD_FIELDS.map((f) => [f, item[f]])) as unknown as ErasureRecord);
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
