import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { BULK_CONCURRENCY, batchGet, batchWrite } from './batch.js';
import { PAYMENTS_MARK_SK, visitorPk } from './visit-store.js';
import { DynamoRecentPaymentMarks } from './recent-payment-marks.js';
import type { Payment } from '../../domain/payments/payment.js';
import type { Customer } from '../../domain/payments/customer.js';
import { aliasRef, type Provider } from '../../domain/payments/facts.js';
import type { BulkLoadOptions, PaymentBulkLoad, PaymentImportWrites, PaymentLedger } from '../../ports.js';
import type { UsdRate } from '../../domain/payments/money.js';
import { contributionOf, paymentKey, type Contribution } from '../../domain/payments/contribution.js';
import { PaymentListStore, type RecomputeBatch } from './payment-list-store.js';
import { PayerCohortStore as CohortStore } from './payments/payer-cohorts.js';
import { PARTITIONS } from './items.js';
import { inParallel } from '../../domain/parallel.js';

const { VISITOR_PAYMENT } = PARTITIONS.visitor.items;
const paymentItemKey = (site: string, provider: Provider, id: string) => ({
  [PK]: PARTITIONS.payment.key(site),
  [SK]: PARTITIONS.payment.items.PAYMENT.key(provider, id),
});
const aliasKey = (site: string, provider: Provider, alias: string) => ({
  [PK]: PARTITIONS.paymentAlias.key(site, provider),
  [SK]: PARTITIONS.paymentAlias.items.PAYMENT_ALIAS.key(alias),
});
const customerItemKey = (site: string, provider: Provider, id: string) => ({
  [PK]: PARTITIONS.customer.key(site),
  [SK]: PARTITIONS.customer.items.CUSTOMER.key(provider, id),
});
/** A payment's copy in its visitor's partition, next to the visits (timeline reads one partition). */
const visitorPaymentKey = (p: Payment) => ({
  [PK]: visitorPk(p.site, p.visitor ?? ''),
  [SK]: VISITOR_PAYMENT.key(p.ts ?? 0, p.provider, p.provider_payment_id),
});
const pendingKey = (site: string, key: string) => ({
  [PK]: PARTITIONS.paymentPending.key(site),
  [SK]: PARTITIONS.paymentPending.items.PAYMENT_PENDING.key(key),
});
/** A PAYMENT_PENDING item: the payment is credited again until `until` (ms). */
const pendingItem = (site: string, payment: Payment, until: number) => ({
  ...pendingKey(site, paymentKey(payment)),
  type: 'PAYMENT_PENDING',
  provider: payment.provider,
  id: payment.provider_payment_id,
  until,
});
/** Visitors whose markers a bulk load raises at once. */
const MARKER_CONCURRENCY = 16;

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { [PK]: _pk, [SK]: _sk, type: _type, ...rest } = item;
  return rest;
}

/**
 * Payments, their aliases, customers, the payment list and its rollups in
 * the single table (`docs/data-model.md`: PAYMENT, PAYMENT_ALIAS, CUSTOMER,
 * PAYMENT_LIST and its counters (`PaymentListStore`), VISITOR_PAYMENT,
 * PAYMENT_PENDING). Writes that several webhook deliveries
 * may race on are conditioned on the version read (`rev`, `ver`).
 */
export class DynamoPaymentStore implements PaymentLedger, PaymentImportWrites {
  private readonly recentMarks: DynamoRecentPaymentMarks;

  /** @param clock ms since epoch: the time RECENT_PAYMENT_MARK items are recorded at */
  constructor(
    private readonly conn: DynamoConnection,
    private readonly clock: () => number = Date.now,
  ) {
    this.recentMarks = new DynamoRecentPaymentMarks(conn);
  }

  /**
   * The canonical ids of the payments known by any of `ids`, sorted: none for
   * a new purchase, one usually, two when an event links two rows that were
   * stored apart (Stripe's invoice and PaymentIntent on newer API versions).
   */
  async findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]> {
    const found = await batchGet(
      this.conn,
      [...new Set(ids)].map((id) => aliasKey(site, provider, id)),
    );
    return [...new Set(found.map((item) => String(item.payment_id)))].sort();
  }

  /** Points `ids` at `paymentId`, replacing what they pointed at (after two rows were merged). */
  async repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of new Set(ids)) {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...aliasKey(site, provider, id), type: 'PAYMENT_ALIAS', payment_id: paymentId },
        }),
      );
    }
  }

  async deletePayment(site: string, provider: Provider, id: string): Promise<void> {
    await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id) }),
    );
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
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: paymentItemKey(site, provider, id), ConsistentRead: true }),
    );
    return Item ? (strip(Item) as unknown as Payment) : null;
  }

  /** Writes a payment if its stored `rev` is still `expectedRev` (0: not stored yet). Returns false on a lost race. */
  async putPayment(payment: Payment, expectedRev: number): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: {
            ...paymentItemKey(payment.site, payment.provider, payment.provider_payment_id),
            type: 'PAYMENT',
            ...payment,
          },
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
    for await (const page of this.paymentPages(site)) out.push(...page);
    return out;
  }

  async getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]> {
    const items = await batchGet(
      this.conn,
      keys.map((k) => paymentItemKey(k.site, k.provider, k.id)),
    );
    return items.map((item) => strip(item) as unknown as Payment);
  }

  async getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: customerItemKey(site, provider, customerId),
        ConsistentRead: true,
      }),
    );
    return Item ? (strip(Item) as unknown as Customer) : null;
  }

  /** Writes a customer if its stored `ver` is still `customer.ver - 1`. Returns false on a lost race. */
  async putCustomer(customer: Customer): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: {
            ...customerItemKey(customer.site, customer.provider, customer.customer_id),
            type: 'CUSTOMER',
            ...customer,
          },
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
    for await (const page of paginateQuery(
      { client: this.conn.doc },
      {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.customer.key(site) },
      },
    )) {
      for (const item of page.Items ?? []) out.push(strip(item) as unknown as Customer);
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
      customers.map((c) => ({
        PutRequest: { Item: { ...customerItemKey(c.site, c.provider, c.customer_id), type: 'CUSTOMER', ...c } },
      })),
      BULK_CONCURRENCY,
    );
  }

  /**
   * Loads payments no other writer is changing, in bulk (the report
   * benchmark, the migration to the list layout, rebuild): their PAYMENT
   * items (unless `writePayments` is false), timeline copies, dimension
   * entries, list items, and the totals of every day and month they touch,
   * each recomputed once; each visitor's payments marker, set to the latest
   * of the loaded payments (so `payments` must hold every payment of their
   * visitors); and retention's payer summaries and cohorts
   * (`CohortStore.bulkLoad`, from these payments and the site's CUSTOMER
   * items). The same items `settlePayment` leaves, written with
   * BatchWriteItem. One chunk of `bulkLoader`: the items are those of any
   * split of `payments` into chunks.
   *
   * @param now ms since epoch, the clock the reports will read with ("paying until" days before its local day are dropped); omitted, none is
   */
  async bulkLoad(
    site: string,
    timezone: string,
    payments: readonly Payment[],
    rate: UsdRate,
    writePayments = true,
    now?: number,
  ): Promise<void> {
    const load = this.bulkLoader(site, timezone, rate, { writePayments, now });
    await load.add(payments);
    await load.finish();
  }

  /**
   * A bulk load (`bulkLoad`) taken in chunks, so the caller holds one chunk
   * of payments at a time (the import; the report benchmark's loader writes its payments a batch of customers
   * at a time). `add` writes a chunk's PAYMENT, VISITOR_PAYMENT, list and
   * PAYER_PAYMENT items at once; `finish` (once, after the last chunk)
   * writes each visitor's marker, recomputes every day and month touched
   * once, then the payers' summaries, members and cohorts
   * (`CohortStore.bulkSummarize`, reading the site's CUSTOMER items), so
   * the table ends item for item as after one `bulkLoad` of all the
   * payments, whatever the chunks and their order
   * (`test/payments/bulk-load-chunks.test.ts`). A payment must be in one
   * chunk only, and every payment of a visitor or payer in some chunk.
   * Memory between chunks: the days, the visitors with their latest payment
   * time and the payer keys, not the payments.
   *
   * The import (`importPayments`) loads into a site that may hold other
   * payments: `raiseMarkers` and `unlist` are for it; the list
   * and cohorts are recomputed from the table, so they count those too.
   */
  bulkLoader(site: string, timezone: string, rate: UsdRate, options: BulkLoadOptions = {}): PaymentBulkLoad {
    const writePayments = options.writePayments ?? true;
    const latest = new Map<string, number>();
    const days = new Set<string>();
    const payers = new Set<string>();
    let finished = false;
    return {
      add: async (payments) => {
        if (finished) throw new Error('bulk load: add after finish');
        const items: Array<Record<string, unknown>> = [];
        for (const p of payments) {
          if (writePayments)
            items.push({ ...paymentItemKey(site, p.provider, p.provider_payment_id), type: 'PAYMENT', ...p });
          if (p.visitor) {
            items.push({ ...visitorPaymentKey({ ...p, site }), type: 'VISITOR_PAYMENT', payment_key: paymentKey(p) });
            latest.set(p.visitor, Math.max(latest.get(p.visitor) ?? 0, p.ts ?? 0));
          }
        }
        await batchWrite(
          this.conn,
          items.map((Item) => ({ PutRequest: { Item } })),
          BULK_CONCURRENCY,
        );
        await this.list.bulkWrite(
          site,
          payments.flatMap((p) => contributionOf({ ...p, site }, timezone, rate) ?? []),
          days,
        );
        await this.cohorts.bulkWrite(site, payments, rate, payers);
      },
      unlist: async (positions) => {
        if (finished) throw new Error('bulk load: unlist after finish');
        await this.list.bulkRemove(positions, days);
      },
      finish: async () => {
        if (finished) throw new Error('bulk load: finished twice');
        finished = true;
        // Each visitor's marker, from the payments loaded (all of their visitors' payments: no other writer runs).
        // Too many to list as recent raises: one reset tells the sessionizer to trust no marker it holds (`ShardVisitCache`).
        if (latest.size > 0) await this.recentMarks.recordReset(site, this.clock());
        if (options.raiseMarkers)
          await inParallel([...latest], MARKER_CONCURRENCY, ([visitor, ts]) => this.raiseMarker(site, visitor, ts));
        else
          await batchWrite(
            this.conn,
            [...latest].map(([visitor, ts]) => ({
              PutRequest: {
                Item: { [PK]: visitorPk(site, visitor), [SK]: PAYMENTS_MARK_SK, type: 'VISITOR_PAYMENTS', latest: ts },
              },
            })),
            BULK_CONCURRENCY,
          );
        await this.list.bulkRecompute(site, days);
        await this.cohorts.bulkSummarize(site, timezone, payers, await this.listCustomers(site), options.now);
      },
    };
  }

  /**
   * The canonical payment id each of `ids` is an alias of (PAYMENT_ALIAS
   * items, BatchGetItem), keyed by `aliasRef(provider, id)`; ids not known
   * are absent.
   */
  async aliasTargets(
    site: string,
    ids: ReadonlyArray<{ provider: Provider; id: string }>,
  ): Promise<Map<string, string>> {
    const found = await batchGet(
      this.conn,
      [...new Map(ids.map((k) => [aliasRef(k.provider, k.id), k])).values()].map((k) =>
        aliasKey(site, k.provider, k.id),
      ),
    );
    const out = new Map<string, string>();
    for (const item of found)
      out.set(aliasRef(String(item[PK]).split('#').at(-1) as Provider, String(item[SK])), String(item.payment_id));
    return out;
  }

  /**
   * Writes payments not stored before (an import's new ones) with
   * BatchWriteItem: their PAYMENT items and an alias item for each of their
   * ids, unconditionally (`linkAliases` would find none of them taken).
   */
  async bulkPutPayments(payments: readonly Payment[]): Promise<void> {
    await batchWrite(
      this.conn,
      payments.flatMap((p) => [
        {
          PutRequest: {
            Item: { ...paymentItemKey(p.site, p.provider, p.provider_payment_id), type: 'PAYMENT', ...p },
          },
        },
        ...[...new Set([p.provider_payment_id, ...p.aliases])].map((alias) => ({
          PutRequest: {
            Item: { ...aliasKey(p.site, p.provider, alias), type: 'PAYMENT_ALIAS', payment_id: p.provider_payment_id },
          },
        })),
      ]),
      BULK_CONCURRENCY,
    );
  }

  /** Deletes the timeline copies (VISITOR_PAYMENT) of payments as they were, with BatchWriteItem (they moved visitor or time). */
  async bulkDropTimelineCopies(previous: readonly Payment[]): Promise<void> {
    await batchWrite(
      this.conn,
      previous.filter((p) => p.visitor).map((p) => ({ DeleteRequest: { Key: visitorPaymentKey(p) } })),
      BULK_CONCURRENCY,
    );
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
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      yield (page.Items ?? []).map((item) => strip(item) as unknown as Payment);
  }

  /** Finishes the syncs `syncDerived` left to `batch`: each day and month recomputed once (`PaymentListStore.finish`). */
  async finishSync(batch: RecomputeBatch): Promise<void> {
    await this.list.finish(batch);
  }

  /** The list and its period rollups (PAYMENT_LIST, PAYMENT_TOTALS, PAYMENT_CUSTOMERS). */
  get list(): PaymentListStore {
    return (this.listStore ??= new PaymentListStore(this.conn));
  }

  private listStore: PaymentListStore | undefined;

  /** Retention's payer summaries and cohort rollups (`CohortStore`). */
  get cohorts(): CohortStore {
    return (this.cohortStore ??= new CohortStore(this.conn));
  }

  private cohortStore: CohortStore | undefined;

  /**
   * Brings a payment's derived items in line with it: its list items and the
   * counters of the days and months they touch (`PaymentListStore.sync`),
   * and its copy in the visitor's partition. Each takes only a newer `rev` of
   * the payment, so replays and races settle on the newest state. Positions
   * in `payment.unlisted` are removed, then forgotten.
   *
   * With `batch`, the list's recomputes and the forgetting of `unlisted`
   * wait for `finishSync(batch)` (`PaymentListStore.sync`).
   *
   * @param previous the visitor and time of the payment as it was stored before, whose timeline copy moves
   */
  async syncDerived(
    payment: Payment,
    contribution: Contribution | null,
    previous: { visitor: string | null; ts: number | null } | null,
    batch?: RecomputeBatch,
  ): Promise<void> {
    const key = paymentKey(payment);
    const unlisted = payment.unlisted ?? [];
    const storedRev = async () =>
      (await this.getPayment(payment.site, payment.provider, payment.provider_payment_id))?.rev ??
      Number.MAX_SAFE_INTEGER;
    await this.list.sync(payment.site, contribution, unlisted, storedRev, batch);
    if (unlisted.length > 0) {
      const forget = () => this.clearUnlisted(payment);
      // Only once the positions' days are recomputed: until then a crash must leave them for the retry.
      if (batch) batch.after.push(forget);
      else await forget();
    }

    if (previous?.visitor && (previous.visitor !== payment.visitor || previous.ts !== payment.ts)) {
      await this.conn.doc.send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: visitorPaymentKey({ ...payment, visitor: previous.visitor, ts: previous.ts }),
        }),
      );
    }
    if (payment.visitor) {
      // Read before writing: a copy already in place is left as it is. Its key and payment key are all it
      // holds, and they do not change with the payment's revision (the sessionizer's write budget, `docs/benchmarks.md` "Budgets"), so racing
      // writers of a new copy write the same item.
      const { Item: copy } = await this.conn.doc.send(
        new GetCommand({ TableName: this.conn.table, Key: visitorPaymentKey(payment), ConsistentRead: true }),
      );
      if (copy) return;
      // A new position on the timeline: the visitor's marker first, so no copy is ever above its marker's time.
      await this.markVisitor(payment.site, payment.visitor, payment.ts ?? 0);
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...visitorPaymentKey(payment), type: 'VISITOR_PAYMENT', payment_key: key },
        }),
      );
    }
  }

  /**
   * Raises the visitor's payments marker (VISITOR_PAYMENTS, `PAYMENTS_MARK_SK`)
   * to `ts` (ms) unless it is already there or later: one conditional
   * UpdateItem, a lost condition being the "already later" case. The raise
   * is recorded first as a RECENT_PAYMENT_MARK, so a sessionizer that holds
   * the visitor's visits without reading them learns of it (`ShardVisitCache`).
   */
  private async markVisitor(site: string, visitor: string, ts: number): Promise<void> {
    await this.recentMarks.record(site, visitor, ts, this.clock());
    await this.raiseMarker(site, visitor, ts);
  }

  /** The marker's conditional raise alone (its RECENT_PAYMENT_MARK, or a reset, recorded by the caller). */
  private async raiseMarker(site: string, visitor: string, ts: number): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: { [PK]: visitorPk(site, visitor), [SK]: PAYMENTS_MARK_SK },
          UpdateExpression: 'SET latest = :ts, #type = :type',
          ConditionExpression: 'attribute_not_exists(latest) OR latest < :ts',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: { ':ts': ts, ':type': 'VISITOR_PAYMENTS' },
        }),
      )
      .catch((error) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
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
      ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':p': VISITOR_PAYMENT.range.all() },
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
    await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: pendingItem(site, payment, until) }));
  }

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

  /** Payments marked pending for a site, with the time until which they are retried. */
  async listPending(site: string): Promise<Array<{ provider: Provider; id: string; until: number }>> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': PARTITIONS.paymentPending.key(site) },
      }),
    );
    return Items.map((i) => ({ provider: i.provider as Provider, id: String(i.id), until: Number(i.until) }));
  }
}
