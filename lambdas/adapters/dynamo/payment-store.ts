import type { DynamoConnection } from './client.js';
import { PaymentListStore } from './payments/payment-list-store.js';
import { PayerCohortStore } from './payments/payer-cohorts.js';
import { PaymentRecords } from './payments/payment-store-records.js';
import { CustomerRecords } from './payments/payment-store-customers.js';
import { PaymentTimeline } from './payments/payment-store-timeline.js';
import { PendingCredits } from './payments/payment-store-pending.js';
import { DerivedPayments } from './payments/payment-derived.js';
import { DynamoPaymentBulkLoads } from './payments/payment-store-bulk.js';

/**
 * The payments' item families in the single table (`docs/data-model.md`, "Payments"), each store the
 * port the payment use cases take for it (`PaymentDeps`, `PaymentImportDeps`):
 * - payments and aliases (PAYMENT, PAYMENT_ALIAS): `PaymentRecords`;
 * - customers (CUSTOMER): `CustomerRecords`;
 * - timeline copies and markers (VISITOR_PAYMENT, VISITOR_PAYMENTS): `PaymentTimeline`;
 * - pending credits (PAYMENT_PENDING): `PendingCredits`;
 * - payers and cohorts (retention): `PayerCohortStore`;
 * - what spans families: a payment's list items, counters and timeline copy (`DerivedPayments`),
 *   and the bulk load (`DynamoPaymentBulkLoads`).
 */
export interface DynamoPaymentStores {
  payments: PaymentRecords;
  customers: CustomerRecords;
  timeline: PaymentTimeline;
  pending: PendingCredits;
  payers: PayerCohortStore;
  derived: DerivedPayments;
  bulk: DynamoPaymentBulkLoads;
}

/**
 * The payment stores on one connection, sharing the list and cohort stores between the per-payment
 * sync and the bulk load.
 * @param clock ms since epoch: the time RECENT_PAYMENT_MARK items are recorded at
 */
export function dynamoPaymentStores(conn: DynamoConnection, clock: () => number = Date.now): DynamoPaymentStores {
  const payments = new PaymentRecords(conn);
  const customers = new CustomerRecords(conn);
  const timeline = new PaymentTimeline(conn, clock);
  const list = new PaymentListStore(conn);
  const payers = new PayerCohortStore(conn);
  return {
    payments,
    customers,
    timeline,
    pending: new PendingCredits(conn),
    payers,
    derived: new DerivedPayments(payments, list, timeline),
    bulk: new DynamoPaymentBulkLoads({
      conn,
      list,
      cohorts: payers,
      timeline,
      customers: (site) => customers.listCustomers(site),
    }),
  };
}
