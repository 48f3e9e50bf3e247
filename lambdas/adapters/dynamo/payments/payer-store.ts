import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import { PARTITIONS } from '../items.js';
import type { Provider } from '../../../domain/payments/facts.js';
import type { Customer } from '../../../domain/payments/customer.js';
import type { StoredEntry } from '../../../domain/payments/payer.js';
import type { PayerPayment } from '../../../domain/reports/cohorts.js';
import {
  entriesPrefix,
  entryItem,
  entryKey,
  entryOf,
  heldOf,
  payerOfSk,
  payerPk,
  paymentOfSk,
  stateKey,
  storedEntryOf,
} from './payer-items.js';

/** A conditional write that lost to a newer one is no error. */
export function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
}

/** A payer's entries and state as one pass over the partition finds them (`PayerStore.everyPayer`). */
export interface PayerItems {
  payer: string;
  entries: PayerPayment[];
  held: string[];
}

/**
 * The items of the payer partition (`payer-items.ts`): a payer's payment entries and its state.
 * Reads are consistent: they decide what a recompute writes.
 */
export class PayerStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** A payment's stored entry, or null (one consistent GetItem). */
  async entry(site: string, payer: string, paymentKey: string): Promise<StoredEntry | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: entryKey(site, payer, paymentKey), ConsistentRead: true }),
    );
    return Item ? storedEntryOf(Item) : null;
  }

  /**
   * Writes a payment's entry unless a newer revision's is stored.
   * @param entry the entry's JSON, null once the payment is not countable
   * @returns false when a newer revision's entry is in
   */
  async putEntry(
    site: string,
    payer: string,
    paymentKey: string,
    rev: number,
    entry: string | null,
    pending: boolean,
  ): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: entryItem(site, payer, paymentKey, rev, entry, pending),
          ConditionExpression: `attribute_not_exists(${PK}) OR rev <= :rev`,
          ExpressionAttributeValues: { ':rev': rev },
        }),
      );
      return true;
    } catch (error) {
      ignoreCondition(error);
      return false;
    }
  }

  /** Removes an entry's `pending`, if it still holds revision `rev`. */
  async settle(site: string, payer: string, paymentKey: string, rev: number): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: entryKey(site, payer, paymentKey),
          UpdateExpression: 'REMOVE pending',
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': rev },
        }),
      )
      .catch(ignoreCondition);
  }

  async deleteEntry(site: string, payer: string, paymentKey: string): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: entryKey(site, payer, paymentKey) }));
  }

  /** A payer's countable entries (one consistent Query, pages of 200). */
  async entries(site: string, payer: string): Promise<PayerPayment[]> {
    const out: PayerPayment[] = [];
    for await (const page of paginateQuery({ client: this.conn.doc }, this.entriesQuery(site, payer)))
      for (const item of page.Items ?? []) {
        const entry = entryOf(item);
        if (entry) out.push(entry);
      }
    return out;
  }

  /** The payments (`provider`, `id`) that hold an entry of the payer, countable or not: keys only, pages of 200. */
  async paymentKeys(site: string, payer: string): Promise<Array<{ provider: Provider; id: string }>> {
    const keys: Array<{ provider: Provider; id: string }> = [];
    const query = { ...this.entriesQuery(site, payer), ProjectionExpression: SK };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) {
        const key = paymentOfSk(String(item[SK]), entriesPrefix(payer));
        if (key) keys.push(key);
      }
    return keys;
  }

  private entriesQuery(site: string, payer: string) {
    return {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': payerPk(site), ':p': entriesPrefix(payer) },
      ConsistentRead: true,
      Limit: 200,
    };
  }

  /** A customer's CUSTOMER item (the payments partition's), read consistently: its subscription statuses. */
  async customer(site: string, provider: string, customerId: string): Promise<Customer | undefined> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: {
          [PK]: PARTITIONS.customer.key(site),
          [SK]: PARTITIONS.customer.items.CUSTOMER.key(provider, customerId),
        },
        ConsistentRead: true,
      }),
    );
    return Item as Customer | undefined;
  }

  /** A payer's state: the days it holds and whether a recompute of it is owed (`pend`); null without one. */
  async state(site: string, payer: string): Promise<{ held: string[]; pend: boolean } | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: stateKey(site, payer), ConsistentRead: true }),
    );
    return Item ? { held: heldOf(Item), pend: Item.pend !== undefined } : null;
  }

  /** Marks a payer's recompute owed (`pend`) without bumping its counter. */
  async markOwed(site: string, payer: string): Promise<void> {
    await this.owe(site, payer, 'SET pend = :one, #type = :type');
  }

  /** Bumps a payer's counter and marks its recompute owed; returns the counter (the recompute owns it) and the days held. */
  async bump(site: string, payer: string): Promise<{ src: number; held: string[] }> {
    const state = await this.owe(site, payer, 'ADD n :one SET pend = :one, #type = :type', 'ALL_NEW');
    return { src: Number(state?.n ?? 1), held: heldOf(state) };
  }

  private async owe(site: string, payer: string, update: string, returnValues?: 'ALL_NEW') {
    const { Attributes } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: stateKey(site, payer),
        UpdateExpression: update,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'PAYER_STATE' },
        ...(returnValues ? { ReturnValues: returnValues } : {}),
      }),
    );
    return Attributes;
  }

  /** Adds a day to those a payer's member items may stand on, before one is written there. */
  async hold(site: string, payer: string, day: string): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: stateKey(site, payer),
        UpdateExpression: 'ADD held :day',
        ExpressionAttributeValues: { ':day': new Set([day]) },
      }),
    );
  }

  /** Ends a payer's recompute: it holds only `day` (none when null) and owes nothing, unless a later recompute bumped it. */
  async release(site: string, payer: string, src: number, day: string | null): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: stateKey(site, payer),
          UpdateExpression: day !== null ? 'SET held = :held REMOVE pend' : 'REMOVE pend, held',
          ConditionExpression: 'n = :src',
          ExpressionAttributeValues: { ':src': src, ...(day !== null ? { ':held': new Set([day]) } : {}) },
        }),
      )
      .catch(ignoreCondition);
  }

  /**
   * Every payer of the site with a state or a countable entry, in key order, with its entries and the
   * days it holds: one paged, consistent Query of the partition (a payer's items are contiguous).
   * Memory: one payer's entries.
   */
  async *everyPayer(site: string): AsyncGenerator<PayerItems> {
    let current = null as PayerItems | null;
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': payerPk(site) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        const state = item.type === 'PAYER_STATE';
        const entry = state || item.type !== 'PAYER_PAYMENT' ? null : entryOf(item);
        if (!state && entry === null) continue;
        const payer = payerOfSk(String(item[SK]));
        if (current !== null && payer !== current.payer) yield current;
        if (current === null || payer !== current.payer) current = { payer, entries: [], held: [] };
        if (state) current.held = heldOf(item);
        else if (entry) current.entries.push(entry);
      }
    }
    if (current) yield current;
  }
}
