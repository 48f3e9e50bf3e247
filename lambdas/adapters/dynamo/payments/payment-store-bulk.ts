import type { DynamoConnection } from '../client.js';
import { BULK_CONCURRENCY, batchWrite } from '../batch.js';
import type { Payment } from '../../../domain/payments/payment.js';
import type { Customer } from '../../../domain/payments/customer.js';
import type { UsdRate } from '../../../domain/payments/money.js';
import { contributionOf, type Contribution } from '../../../domain/payments/contribution.js';
import type { BulkLoadOptions, PaymentBulkLoad, PaymentBulkLoads } from '../../../ports.js';
import { paymentItem, visitorPaymentItem } from './payment-items.js';
import type { PaymentTimeline } from './payment-store-timeline.js';

/** What a bulk load writes of the payment list and its counters (`docs/data-model.md`, "Payments"). */
export interface ListBulkWrites {
  /** Writes the contributions' list items and dimension entries, adding the local days they touch to `days`. */
  bulkWrite(site: string, contributions: readonly Contribution[], days: Set<string>): Promise<unknown>;
  /** Deletes list positions, adding their days to `days`. */
  bulkRemove(positions: readonly string[], days: Set<string>): Promise<void>;
  /** Recomputes the counters of `days` and of their months, each once. */
  bulkRecompute(site: string, days: Iterable<string>): Promise<void>;
}

/** What a bulk load writes of retention's payers and cohorts (`docs/retention.md`). */
export interface CohortBulkWrites {
  /** Writes the payments' payer entries, adding their payers to `payers`. */
  bulkWrite(site: string, payments: readonly Payment[], rate: UsdRate, payers: Set<string>): Promise<void>;
  /** Recomputes the payers' summaries, members and cohorts (`now`: ms, the reports' clock). */
  bulkSummarize(
    site: string,
    timezone: string,
    payers: ReadonlySet<string>,
    customers: readonly Customer[],
    now?: number,
  ): Promise<void>;
}

/** The item families a bulk load writes, and the site's customers it reads at the end. */
export interface BulkLoadParts {
  conn: DynamoConnection;
  list: ListBulkWrites;
  cohorts: CohortBulkWrites;
  timeline: PaymentTimeline;
  customers: (site: string) => Promise<Customer[]>;
}

/**
 * A bulk load of payments no other writer is changing, taken in chunks, so the caller holds one chunk
 * of payments at a time (the import; the report benchmark's loader writes its payments a batch of
 * customers at a time; `docs/data-model.md`, "Payments"). `add` writes a chunk's PAYMENT (unless
 * `writePayments` is false), VISITOR_PAYMENT, list and PAYER_PAYMENT items at once, with
 * BatchWriteItem; `finish` (once, after the last chunk) writes each visitor's marker, recomputes every
 * day and month touched once, then the payers' summaries, members and cohorts (reading the site's
 * CUSTOMER items), so the table ends item for item as after one load of all the payments, whatever the
 * chunks and their order (`test/payments/bulk-load-chunks.test.ts`): the same items settling each
 * payment leaves. A payment must be in one chunk only, and every payment of a visitor or payer in some
 * chunk. Memory between chunks: the days, the visitors with their latest payment time and the payer
 * keys, not the payments.
 *
 * The import (`importPayments`) loads into a site that may hold other payments: `raiseMarkers` and
 * `unlist` are for it; the list and cohorts are recomputed from the table, so they count those too.
 * @throws Error when `add` or `unlist` follows `finish`, or `finish` runs twice
 */
export function paymentBulkLoader(
  parts: BulkLoadParts,
  site: string,
  timezone: string,
  rate: UsdRate,
  options: BulkLoadOptions = {},
): PaymentBulkLoad {
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
        if (writePayments) items.push(paymentItem(p, site));
        if (p.visitor) {
          items.push(visitorPaymentItem({ ...p, site }));
          latest.set(p.visitor, Math.max(latest.get(p.visitor) ?? 0, p.ts ?? 0));
        }
      }
      await batchWrite(
        parts.conn,
        items.map((Item) => ({ PutRequest: { Item } })),
        BULK_CONCURRENCY,
      );
      await parts.list.bulkWrite(
        site,
        payments.flatMap((p) => contributionOf({ ...p, site }, timezone, rate) ?? []),
        days,
      );
      await parts.cohorts.bulkWrite(site, payments, rate, payers);
    },
    unlist: async (positions) => {
      if (finished) throw new Error('bulk load: unlist after finish');
      await parts.list.bulkRemove(positions, days);
    },
    finish: async (onStep) => {
      if (finished) throw new Error('bulk load: finished twice');
      finished = true;
      onStep?.('days');
      // Each visitor's marker, from the payments loaded (all of their visitors' payments: no other writer runs).
      await parts.timeline.bulkMarkers(site, latest, options.raiseMarkers ?? false);
      await parts.list.bulkRecompute(site, days);
      onStep?.('cohorts');
      await parts.cohorts.bulkSummarize(site, timezone, payers, await parts.customers(site), options.now);
    },
  };
}

/** The bulk loads of a site's payments on the single table (`paymentBulkLoader`). */
export class DynamoPaymentBulkLoads implements PaymentBulkLoads {
  constructor(private readonly parts: BulkLoadParts) {}

  /** A bulk load in chunks (`paymentBulkLoader`). */
  bulkLoader(site: string, timezone: string, rate: UsdRate, options: BulkLoadOptions = {}): PaymentBulkLoad {
    return paymentBulkLoader(this.parts, site, timezone, rate, options);
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
