import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import { PARTITIONS } from '../items.js';
import { BULK_CONCURRENCY, batchGet, batchWrite } from '../batch.js';
import type { Payment } from '../../../domain/payments/payment.js';
import { aliasRef, type Provider } from '../../../domain/payments/facts.js';
import type { PaymentRef } from '../../../ports.js';
import { aliasItem, aliasKey, aliasOf, paymentItem, paymentItemKey, paymentOf } from './payment-items.js';

/**
 * Puts `item` if the stored item's `field` is still `expected` (null: no item stored yet): the
 * optimistic write of items several webhook deliveries may race on.
 * @returns false when the condition failed (a lost race)
 */
export async function putIfVersion(
  conn: DynamoConnection,
  item: Record<string, unknown>,
  field: 'rev' | 'ver',
  expected: number | null,
): Promise<boolean> {
  try {
    await conn.doc.send(
      new PutCommand({
        TableName: conn.table,
        Item: item,
        ConditionExpression: expected === null ? `attribute_not_exists(${PK})` : `${field} = :v`,
        ExpressionAttributeValues: expected === null ? undefined : { ':v': expected },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Payments and their aliases (PAYMENT and PAYMENT_ALIAS items, `docs/data-model.md`): a payment is
 * stored once under its canonical id, and every id a provider knows it by points there. Writes that
 * several webhook deliveries may race on are conditioned on the revision read (`rev`).
 */
export class PaymentRecords {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * The canonical ids of the payments known by any of `ids`, sorted: none for
   * a new purchase, one usually, two when an event links two rows that were
   * stored apart (Stripe's invoice and PaymentIntent on newer API versions).
   */
  async findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]> {
    const targets = await this.aliasTargets(
      site,
      ids.map((id) => ({ provider, id })),
    );
    return [...new Set(targets.values())].sort();
  }

  /** Points `ids` at `paymentId`, replacing what they pointed at (after two rows were merged). */
  async repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of new Set(ids)) {
      await this.conn.doc.send(
        new PutCommand({ TableName: this.conn.table, Item: aliasItem(site, provider, id, paymentId) }),
      );
    }
  }

  /**
   * Points every id of a purchase at its canonical id (first writer wins); the canonical id itself too
   * unless `own` is false (the import leaves it to the PAYMENT item, as `bulkPutPayments` does).
   */
  async linkAliases(
    site: string,
    provider: Provider,
    paymentId: string,
    ids: readonly string[],
    own = true,
  ): Promise<void> {
    for (const id of new Set(own ? [paymentId, ...ids] : ids.filter((id) => id !== paymentId))) {
      try {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: aliasItem(site, provider, id, paymentId),
            ConditionExpression: `attribute_not_exists(${PK})`,
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
  }

  /**
   * The canonical payment id each of `ids` names, keyed by `aliasRef(provider, id)`; ids not known
   * are absent. An id's PAYMENT_ALIAS item says where it points; an id without one that a PAYMENT
   * item is stored under names that payment: an import writes no alias of a payment's own id
   * (`bulkPutPayments`), its PAYMENT item is that alias (`docs/data-model.md`, PAYMENT_ALIAS). Where
   * both exist the alias wins (a row folded into another is repointed before it is deleted). One
   * BatchGetItem round for both kinds of item, the PAYMENT items' keys alone read back.
   */
  async aliasTargets(site: string, ids: readonly PaymentRef[]): Promise<Map<string, string>> {
    const refs = [...new Map(ids.map((k) => [aliasRef(k.provider, k.id), k])).values()];
    const found = await batchGet(
      this.conn,
      refs.flatMap((k) => [aliasKey(site, k.provider, k.id), paymentItemKey(site, k.provider, k.id)]),
      [PK, SK, 'type', 'payment_id', 'provider', 'provider_payment_id'],
    );
    const aliases = new Map<string, string>();
    const rows = new Map<string, string>();
    for (const item of found) {
      if (item.type === 'PAYMENT_ALIAS') {
        const alias = aliasOf(item);
        aliases.set(aliasRef(alias.provider, alias.id), String(item.payment_id));
      } else {
        const id = String(item.provider_payment_id);
        rows.set(aliasRef(item.provider as Provider, id), id);
      }
    }
    return new Map([...rows, ...aliases]);
  }

  async deletePayment(site: string, provider: Provider, id: string): Promise<void> {
    await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id) }),
    );
  }

  /** The stored payment, read strongly consistent; null when there is none. */
  async getPayment(site: string, provider: Provider, id: string): Promise<Payment | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id), ConsistentRead: true }),
    );
    return Item ? paymentOf(Item) : null;
  }

  /** The stored payments of `keys` (BatchGetItem); a key with none is left out. */
  async getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]> {
    const items = await batchGet(
      this.conn,
      keys.map((k) => paymentItemKey(k.site, k.provider, k.id)),
    );
    return items.map(paymentOf);
  }

  /** Writes a payment if its stored `rev` is still `expectedRev` (0: not stored yet). Returns false on a lost race. */
  async putPayment(payment: Payment, expectedRev: number): Promise<boolean> {
    return putIfVersion(this.conn, paymentItem(payment), 'rev', expectedRev === 0 ? null : expectedRev);
  }

  /** Every payment of a site (for re-crediting after a change of model or window). */
  async listPayments(site: string): Promise<Payment[]> {
    const out: Payment[] = [];
    for await (const page of this.paymentPages(site)) out.push(...page);
    return out;
  }

  /**
   * A site's PAYMENT items a Query page at a time (1 MB, or `limit` items),
   * for callers that must not hold every payment at once.
   */
  async *paymentPages(site: string, limit?: number): AsyncGenerator<Payment[]> {
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.payment.key(site) },
      Limit: limit,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) yield (page.Items ?? []).map(paymentOf);
  }

  /** Forgets a payment's `unlisted` positions once their days are recomputed, if it is still at revision `rev`. */
  async clearUnlisted(payment: Payment): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: paymentItemKey(payment.site, payment.provider, payment.provider_payment_id),
          UpdateExpression: 'REMOVE unlisted',
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': payment.rev },
        }),
      )
      .catch((error) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  /**
   * Writes payments not stored before (an import's new ones) with
   * BatchWriteItem: their PAYMENT items and an alias item for each of their
   * other ids, unconditionally (`linkAliases` would find none of them
   * taken). The payment's own id needs none: `aliasTargets` reads the
   * PAYMENT item as its alias, which saves an item per payment.
   */
  async bulkPutPayments(payments: readonly Payment[]): Promise<void> {
    await batchWrite(
      this.conn,
      payments.flatMap((p) => [
        { PutRequest: { Item: paymentItem(p) } },
        ...[...new Set(p.aliases)]
          .filter((alias) => alias !== p.provider_payment_id)
          .map((alias) => ({
            PutRequest: { Item: aliasItem(p.site, p.provider, alias, p.provider_payment_id) },
          })),
      ]),
      BULK_CONCURRENCY,
    );
  }
}
