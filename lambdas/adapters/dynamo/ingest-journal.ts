import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { recordExpiry, ttlOf } from './expiry.js';
import type { IngestJournal, JournalEntry } from '../../ports.js';

const JOURNAL_PK = PARTITIONS.ingest.key();
const { INGEST_CURSOR, INGEST_ENTRY, INGEST_SEEN } = PARTITIONS.ingest.items;
const CURSOR_SK = INGEST_CURSOR.key();
/** How long an entry and the record of a journaled object live: ms (the registry's `ttlSeconds`). */
const KEEP_MS = 7 * 86_400_000;
const entrySk = INGEST_ENTRY.key;
const seenSk = INGEST_SEEN.key;

/**
 * The sessionizer's journal of delivered raw objects in the table (`INGEST`
 * partition, `docs/data-model.md`; `docs/ingestion.md` "Choosing the
 * ingestion path"). One writer at a time (the sessionizer runs with reserved
 * concurrency 1; locally one process). An object is given the next journal
 * number (`UpdateItem ADD` on the cursor), then its entry, then the record
 * that it was seen: a crash between them journals the object again later,
 * which the sessionizer absorbs (a visit keeps each event id once).
 */
export class DynamoIngestJournal implements IngestJournal {
  constructor(
    private readonly conn: DynamoConnection,
    private readonly options: { clock?: () => number; localExpiry?: DynamoConnection } = {},
  ) {}

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  async add(key: string): Promise<number | null> {
    const { Item: seen } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: JOURNAL_PK, [SK]: seenSk(key) },
        ConsistentRead: true,
      }),
    );
    if (seen) return null;
    const { Attributes } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: JOURNAL_PK, [SK]: CURSOR_SK },
        UpdateExpression: 'ADD #next :one SET #type = :type',
        ExpressionAttributeNames: { '#next': 'next', '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'INGEST_CURSOR' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const n = Number(Attributes?.next);
    const expires = this.now() + KEEP_MS;
    await this.put(entrySk(n), { type: 'INGEST_ENTRY', key }, expires);
    await this.put(seenSk(key), { type: 'INGEST_SEEN', n }, expires);
    return n;
  }

  async done(): Promise<number> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: { [PK]: JOURNAL_PK, [SK]: CURSOR_SK }, ConsistentRead: true }),
    );
    return Number(Item?.done ?? 0);
  }

  async pending(after: number, limit: number): Promise<JournalEntry[]> {
    const { Items } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': JOURNAL_PK, ':from': entrySk(after + 1), ':to': INGEST_ENTRY.range.last() },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => ({ n: Number(String(item[SK]).slice(2)), key: String(item.key) }));
  }

  async advance(n: number): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: JOURNAL_PK, [SK]: CURSOR_SK },
        UpdateExpression: 'SET #done = :n',
        ExpressionAttributeNames: { '#done': 'done' },
        ExpressionAttributeValues: { ':n': n },
      }),
    );
    // Taken: the entry is not read again (the cursor is past it); the seen record stays until it expires.
    await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: { [PK]: JOURNAL_PK, [SK]: entrySk(n) } }),
    );
  }

  async claim(key: string, n: number): Promise<boolean> {
    const { Item: seen } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: JOURNAL_PK, [SK]: seenSk(key) },
        ConsistentRead: true,
      }),
    );
    if (seen) return Number(seen.n) === n;
    // The add that made entry n broke off before naming it: name it now, so a later add of the key is a no-op.
    await this.put(seenSk(key), { type: 'INGEST_SEEN', n }, this.now() + KEEP_MS);
    return true;
  }

  private async put(sk: string, item: Record<string, unknown>, expires: number): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { [PK]: JOURNAL_PK, [SK]: sk, ...item, ...ttlOf(expires) },
      }),
    );
    if (this.options.localExpiry) await recordExpiry(this.options.localExpiry, JOURNAL_PK, sk, expires);
  }
}
