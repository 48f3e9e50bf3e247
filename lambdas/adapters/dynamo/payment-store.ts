import { DeleteCommand, GetCommand, PutCommand, QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet } from './batch.js';
import { visitorPk } from './visit-store.js';
import type { Payment } from '../../domain/payments/payment.js';
import type { Customer } from '../../domain/payments/customer.js';
import type { Provider } from '../../domain/payments/facts.js';
import type { DimensionEntry, PaymentPeriods, TotalsEntry } from '../../domain/payments/entries.js';
import { paymentKey } from '../../domain/payments/entries.js';
import { PAYMENT_DIMENSIONS, type PaymentDimension, type Granularity } from '../../domain/rollup.js';

const paymentItemKey = (site: string, provider: Provider, id: string) => ({ [PK]: `PAY#${site}`, [SK]: `P#${provider}#${id}` });
const aliasKey = (site: string, provider: Provider, alias: string) => ({ [PK]: `PAYID#${site}#${provider}`, [SK]: alias });
const customerItemKey = (site: string, provider: Provider, id: string) => ({ [PK]: `CUST#${site}`, [SK]: `${provider}#${id}` });
/** Payment rollups: entries per payment, by metric (`totals` or a dimension) and site-local period. */
export const paymentRollupPk = (site: string, metric: 'totals' | PaymentDimension) => `PR#${site}#${metric}`;
const paymentRollupKey = (site: string, metric: 'totals' | PaymentDimension, granularity: Granularity, period: string) => ({
  [PK]: paymentRollupPk(site, metric),
  [SK]: `${granularity}#${period}`,
});
/** A payment's copy in its visitor's partition, next to the visits (timeline reads one partition). */
const visitorPaymentKey = (p: Payment) => ({
  [PK]: visitorPk(p.site, p.visitor ?? ''),
  [SK]: `P#${String(p.ts ?? 0).padStart(13, '0')}#${p.provider}#${p.provider_payment_id}`,
});
const pendingKey = (site: string, key: string) => ({ [PK]: `PAYPENDING#${site}`, [SK]: key });

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { [PK]: _pk, [SK]: _sk, type: _type, ...rest } = item;
  return rest;
}

/**
 * Payments, their aliases, customers and payment rollups in the single table
 * (`docs/data-model.md`: PAYMENT, PAYMENT_ALIAS, CUSTOMER, PAYMENT_ROLLUP,
 * VISITOR_PAYMENT, PAYMENT_PENDING). Writes that several webhook deliveries
 * may race on are conditioned on the version read (`rev`, `ver`).
 */
export class DynamoPaymentStore {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * The canonical ids of the payments known by any of `ids`, sorted: none for
   * a new purchase, one usually, two when an event links two rows that were
   * stored apart (Stripe's invoice and PaymentIntent on newer API versions).
   */
  async findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]> {
    const found = await batchGet(this.conn, [...new Set(ids)].map((id) => aliasKey(site, provider, id)));
    return [...new Set(found.map((item) => String(item.payment_id)))].sort();
  }

  /** Points `ids` at `paymentId`, replacing what they pointed at (after two rows were merged). */
  async repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of new Set(ids)) {
      await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: { ...aliasKey(site, provider, id), type: 'PAYMENT_ALIAS', payment_id: paymentId } }));
    }
  }

  async deletePayment(site: string, provider: Provider, id: string): Promise<void> {
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id) }));
  }

  /** Points every id of a purchase at its canonical id (first writer wins). */
  async linkAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of new Set([paymentId, ...ids])) {
      try {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { ...aliasKey(site, provider, id), type: 'PAYMENT_ALIAS', payment_id: paymentId },
            ConditionExpression: `attribute_not_exists(${PK})`,
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  async getPayment(site: string, provider: Provider, id: string): Promise<Payment | null> {
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id), ConsistentRead: true }));
    return Item ? (strip(Item) as unknown as Payment) : null;
  }

  /** Writes a payment if its stored `rev` is still `expectedRev` (0: not stored yet). Returns false on a lost race. */
  async putPayment(payment: Payment, expectedRev: number): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...paymentItemKey(payment.site, payment.provider, payment.provider_payment_id), type: 'PAYMENT', ...payment },
          ConditionExpression: expectedRev === 0 ? `attribute_not_exists(${PK})` : 'rev = :rev',
          ExpressionAttributeValues: expectedRev === 0 ? undefined : { ':rev': expectedRev },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Every payment of a site (for re-crediting after a change of model or window). */
  async listPayments(site: string): Promise<Payment[]> {
    const out: Payment[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': `PAY#${site}` },
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) out.push(strip(item) as unknown as Payment);
    }
    return out;
  }

  async getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]> {
    const items = await batchGet(this.conn, keys.map((k) => paymentItemKey(k.site, k.provider, k.id)));
    return items.map((item) => strip(item) as unknown as Payment);
  }

  async getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null> {
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: customerItemKey(site, provider, customerId), ConsistentRead: true }));
    return Item ? (strip(Item) as unknown as Customer) : null;
  }

  /** Writes a customer if its stored `ver` is still `customer.ver - 1`. Returns false on a lost race. */
  async putCustomer(customer: Customer): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...customerItemKey(customer.site, customer.provider, customer.customer_id), type: 'CUSTOMER', ...customer },
          ConditionExpression: customer.ver === 1 ? `attribute_not_exists(${PK})` : 'ver = :ver',
          ExpressionAttributeValues: customer.ver === 1 ? undefined : { ':ver': customer.ver - 1 },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Every customer of a site (retention). */
  async listCustomers(site: string): Promise<Customer[]> {
    const out: Customer[] = [];
    for await (const page of paginateQuery({ client: this.conn.doc }, { TableName: this.conn.table, KeyConditionExpression: `${PK} = :pk`, ExpressionAttributeValues: { ':pk': `CUST#${site}` } })) {
      for (const item of page.Items ?? []) out.push(strip(item) as unknown as Customer);
    }
    return out;
  }

  /**
   * Brings a payment's derived items in line with it: its entries in the
   * payment rollups of `periods` (tombstones in `previous` periods it left)
   * and its copy in the visitor's partition. Each rollup item takes the entry
   * only if it holds an older `rev` for the payment, so replays and races
   * settle on the newest state.
   */
  async syncDerived(
    payment: Payment,
    periods: PaymentPeriods | null,
    previous: { periods: PaymentPeriods | null; visitor: string | null; ts: number | null } | null,
    entries: { totals: TotalsEntry; dimensions: Record<PaymentDimension, DimensionEntry> },
  ): Promise<void> {
    const key = paymentKey(payment);
    const writes: Array<[Record<string, string>, TotalsEntry | DimensionEntry]> = [];
    const place = (p: PaymentPeriods, tombstone: boolean) => {
      for (const [g, period] of [['D', p.day], ['M', p.month]] as const) {
        writes.push([paymentRollupKey(payment.site, 'totals', g, period), tombstone ? [payment.rev] : entries.totals]);
        for (const d of PAYMENT_DIMENSIONS) writes.push([paymentRollupKey(payment.site, d, g, period), tombstone ? [payment.rev] : entries.dimensions[d]]);
      }
    };
    if (previous?.periods && (!periods || previous.periods.day !== periods.day)) place(previous.periods, true);
    if (periods) place(periods, false);
    await Promise.all(writes.map(([k, entry]) => this.setEntry(k, key, entry)));

    if (previous?.visitor && (previous.visitor !== payment.visitor || previous.ts !== payment.ts)) {
      await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: visitorPaymentKey({ ...payment, visitor: previous.visitor, ts: previous.ts }) }));
    }
    if (payment.visitor) {
      // Read before writing: a payment credited again without a change (most re-credits) costs a read, not a write.
      const { Item: copy } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: visitorPaymentKey(payment), ConsistentRead: true }));
      if (copy && Number(copy.rev) >= payment.rev) return;
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...visitorPaymentKey(payment), type: 'VISITOR_PAYMENT', payment_key: key, rev: payment.rev },
          ConditionExpression: `attribute_not_exists(${PK}) OR rev <= :rev`,
          ExpressionAttributeValues: { ':rev': payment.rev },
        }),
      ).catch((error) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
    }
  }

  private async setEntry(key: Record<string, string>, paymentKeyString: string, entry: TotalsEntry | DimensionEntry): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }));
      const entries = Item?.e ? (JSON.parse(String(Item.e)) as Record<string, number[]>) : {};
      const current = entries[paymentKeyString];
      if (current && (current[0] ?? 0) >= (entry[0] ?? 0) && JSON.stringify(current) === JSON.stringify(entry)) return;
      if (current && (current[0] ?? 0) > (entry[0] ?? 0)) return;
      entries[paymentKeyString] = entry as number[];
      const ver = Number(Item?.ver ?? 0);
      try {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { ...key, type: 'PAYMENT_ROLLUP', e: JSON.stringify(entries), ver: ver + 1 },
            ConditionExpression: Item ? 'ver = :ver' : `attribute_not_exists(${PK})`,
            ExpressionAttributeValues: Item ? { ':ver': ver } : undefined,
          }),
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new Error(`payment rollup ${key[PK]} ${key[SK]}: too many concurrent updates`);
  }

  /**
   * The payments on a visitor's timeline (VISITOR_PAYMENT items in the
   * visitor's partition: those whose `visitor` is this visitor), by provider
   * and canonical id. One Query, paged.
   */
  async visitorPayments(site: string, visitorId: string): Promise<Array<{ provider: Provider; id: string }>> {
    const out: Array<{ provider: Provider; id: string }> = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':p': 'P#' },
      ProjectionExpression: SK,
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        // P#<13-digit ts>#<provider>#<id>; the id may itself contain '#'.
        const [, , provider, ...id] = String(item[SK]).split('#');
        out.push({ provider: provider as Provider, id: id.join('#') });
      }
    }
    return out;
  }

  /** Marks a payment to be credited again later (its visits may not be sessionized yet). */
  async markPending(site: string, payment: Payment, until: number): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({ TableName: this.conn.table, Item: { ...pendingKey(site, paymentKey(payment)), type: 'PAYMENT_PENDING', provider: payment.provider, id: payment.provider_payment_id, until } }),
    );
  }

  async clearPending(site: string, payment: Payment): Promise<void> {
    // Most payments were never pending: a read is cheaper than a delete of nothing.
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: pendingKey(site, paymentKey(payment)), ConsistentRead: true }));
    if (Item) await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: pendingKey(site, paymentKey(payment)) }));
  }

  /** Payments marked pending for a site, with the time until which they are retried. */
  async listPending(site: string): Promise<Array<{ provider: Provider; id: string; until: number }>> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({ TableName: this.conn.table, KeyConditionExpression: `${PK} = :pk`, ExpressionAttributeValues: { ':pk': `PAYPENDING#${site}` } }),
    );
    return Items.map((i) => ({ provider: i.provider as Provider, id: String(i.id), until: Number(i.until) }));
  }
}
