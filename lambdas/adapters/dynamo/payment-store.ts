import type { DynamoConnection } from './client.js';
import type { Payment } from '../../domain/payments/payment.js';
import type { Customer } from '../../domain/payments/customer.js';
import type { Provider } from '../../domain/payments/facts.js';
import type { BulkLoadOptions, PaymentBulkLoad, PaymentImportWrites, PaymentLedger, PaymentRef } from '../../ports.js';
import type { UsdRate } from '../../domain/payments/money.js';
import type { Contribution } from '../../domain/payments/contribution.js';
import { PaymentListStore } from './payments/payment-list-store.js';
import type { RecomputeBatch } from './payments/payment-list-batch.js';
import { PayerCohortStore } from './payments/payer-cohorts.js';
import { PaymentRecords } from './payments/payment-store-records.js';
import { CustomerRecords } from './payments/payment-store-customers.js';
import { PaymentTimeline } from './payments/payment-store-timeline.js';
import { PendingCredits } from './payments/payment-store-pending.js';
import { paymentBulkLoader } from './payments/payment-store-bulk.js';

/**
 * The payment ledger in the single table (`docs/data-model.md`, "Payments"): one store per item
 * family, composed here into the ports the payment use cases take. Each method is the family
 * store's, documented there and on the port:
 * - payments and aliases (PAYMENT, PAYMENT_ALIAS): `PaymentRecords`;
 * - customers (CUSTOMER): `CustomerRecords`;
 * - timeline copies and markers (VISITOR_PAYMENT, VISITOR_PAYMENTS): `PaymentTimeline`;
 * - pending credits (PAYMENT_PENDING): `PendingCredits`;
 * - the list and its counters: `PaymentListStore`; payers and cohorts: `CohortStore`.
 * What spans families lives here: `syncDerived` and the bulk load (`paymentBulkLoader`).
 */
export class DynamoPaymentStore implements PaymentLedger, PaymentImportWrites {
  private readonly records: PaymentRecords;
  private readonly customers: CustomerRecords;
  private readonly timeline: PaymentTimeline;
  private readonly pending: PendingCredits;

  /** @param clock ms since epoch: the time RECENT_PAYMENT_MARK items are recorded at */
  constructor(
    private readonly conn: DynamoConnection,
    clock: () => number = Date.now,
  ) {
    this.records = new PaymentRecords(conn);
    this.customers = new CustomerRecords(conn);
    this.timeline = new PaymentTimeline(conn, clock);
    this.pending = new PendingCredits(conn);
  }

  findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]> {
    return this.records.findPaymentIds(site, provider, ids);
  }
  repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    return this.records.repointAliases(site, provider, paymentId, ids);
  }
  linkAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[], own = true): Promise<void> {
    return this.records.linkAliases(site, provider, paymentId, ids, own);
  }
  aliasTargets(site: string, ids: readonly PaymentRef[]): Promise<Map<string, string>> {
    return this.records.aliasTargets(site, ids);
  }
  deletePayment(site: string, provider: Provider, id: string): Promise<void> {
    return this.records.deletePayment(site, provider, id);
  }
  getPayment(site: string, provider: Provider, id: string): Promise<Payment | null> {
    return this.records.getPayment(site, provider, id);
  }
  getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]> {
    return this.records.getPayments(keys);
  }
  putPayment(payment: Payment, expectedRev: number): Promise<boolean> {
    return this.records.putPayment(payment, expectedRev);
  }
  listPayments(site: string): Promise<Payment[]> {
    return this.records.listPayments(site);
  }
  paymentPages(site: string, limit?: number): AsyncGenerator<Payment[]> {
    return this.records.paymentPages(site, limit);
  }
  clearUnlisted(payment: Payment): Promise<void> {
    return this.records.clearUnlisted(payment);
  }
  bulkPutPayments(payments: readonly Payment[]): Promise<void> {
    return this.records.bulkPutPayments(payments);
  }

  getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null> {
    return this.customers.getCustomer(site, provider, customerId);
  }
  putCustomer(customer: Customer): Promise<boolean> {
    return this.customers.putCustomer(customer);
  }
  listCustomers(site: string): Promise<Customer[]> {
    return this.customers.listCustomers(site);
  }
  bulkLoadCustomers(customers: readonly Customer[]): Promise<void> {
    return this.customers.bulkLoadCustomers(customers);
  }

  visitorPayments(site: string, visitorId: string): Promise<PaymentRef[]> {
    return this.timeline.visitorPayments(site, visitorId);
  }
  bulkDropTimelineCopies(previous: readonly Payment[]): Promise<void> {
    return this.timeline.bulkDropTimelineCopies(previous);
  }

  markPending(site: string, payment: Payment, until: number): Promise<void> {
    return this.pending.markPending(site, payment, until);
  }
  clearPending(site: string, payment: Payment): Promise<void> {
    return this.pending.clearPending(site, payment);
  }
  listPending(site: string): Promise<Array<PaymentRef & { until: number }>> {
    return this.pending.listPending(site);
  }
  bulkPending(
    site: string,
    mark: ReadonlyArray<{ payment: Payment; until: number }>,
    clear: readonly Payment[],
  ): Promise<void> {
    return this.pending.bulkPending(site, mark, clear);
  }

  /** The list and its period rollups (PAYMENT_LIST, PAYMENT_TOTALS, PAYMENT_CUSTOMERS). */
  get list(): PaymentListStore {
    return (this.listStore ??= new PaymentListStore(this.conn));
  }

  private listStore: PaymentListStore | undefined;

  /** Retention's payer summaries and cohort rollups (`CohortStore`). */
  get cohorts(): PayerCohortStore {
    return (this.cohortStore ??= new PayerCohortStore(this.conn));
  }

  private cohortStore: PayerCohortStore | undefined;

  /**
   * Brings a payment's derived items in line with it: its list items and the
   * counters of the days and months they touch (`PaymentListStore.sync`),
   * and its copy in the visitor's partition (`PaymentTimeline.place`). Each takes only a newer `rev` of
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
    await this.timeline.place(payment, previous);
  }

  /** Finishes the syncs `syncDerived` left to `batch`: each day and month recomputed once (`PaymentListStore.finish`). */
  async finishSync(batch: RecomputeBatch): Promise<void> {
    await this.list.finish(batch);
  }

  /** A bulk load in chunks (`paymentBulkLoader`). */
  bulkLoader(site: string, timezone: string, rate: UsdRate, options: BulkLoadOptions = {}): PaymentBulkLoad {
    const parts = {
      conn: this.conn,
      list: this.list,
      cohorts: this.cohorts,
      timeline: this.timeline,
      customers: (s: string) => this.listCustomers(s),
    };
    return paymentBulkLoader(parts, site, timezone, rate, options);
  }

  /**
   * Loads payments no other writer is changing, in one chunk of `bulkLoader` (the report benchmark,
   * the migration to the list layout, rebuild): `payments` must hold every payment of their visitors.
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
}
