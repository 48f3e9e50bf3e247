import type { DynamoConnection } from '../client.js';
import { PARTITIONS } from '../items.js';
import { PAYMENT_DIMENSIONS, type Granularity, type PaymentDimension } from '../../../domain/rollup.js';
import type { Contribution, ListClass, PeriodCustomers } from '../../../domain/payments/contribution.js';
import { addSlots, lostWith, planListing, type DaySlots } from '../../../domain/payments/recompute-plan.js';
import { slotsLost, slotsOf, type DimensionSlot } from './dimension-slots.js';
import type { RecomputeBatch } from './payment-list-batch.js';
import { PaymentCustomersItems, customersPk } from './payment-list-customers.js';
import { dimensionPk } from './payment-list-dimension-items.js';
import { PaymentDimensions } from './payment-list-dimensions.js';
import { PaymentListPage } from './payment-list-page.js';
import {
  PaymentListPositions,
  dayOfPosition,
  listKeys,
  listPk,
  parsePosition,
  positionId,
  refundedPk,
} from './payment-list-positions.js';
import { PaymentListRecompute } from './payment-list-recompute.js';
import { PaymentTotalsItems, totalsPk } from './payment-list-totals.js';
import type { StoredPeriod } from '../../../ports.js';

/**
 * The partitions of a site's payment counters that do not depend on time: PAYMENT_TOTALS and
 * PAYMENT_CUSTOMERS, PAYMENT_DIMENSION per dimension, and layout 1's PAYMENT_ROLLUP ones (nothing
 * reads them; listed so a retired generation leaves none). The list's month partitions are found
 * with `PaymentListStore.listPartitions`.
 */
export function counterPartitions(site: string): string[] {
  return [
    totalsPk(site),
    customersPk(site),
    ...PAYMENT_DIMENSIONS.map((d) => dimensionPk(site, d)),
    ...['totals', ...PAYMENT_DIMENSIONS].map((m) => PARTITIONS.paymentRollup.key(site, m)),
  ];
}

/**
 * The payment list and its period counters (`docs/data-model.md`, "Payments: a list, and counters
 * recomputed from it"), as the payment and report stores use them: a payment's sync, bulk loads,
 * and the reads. Each family is its own module (`payment-list-*.ts`); which positions and periods
 * a change rewrites is `domain/payments/recompute-plan.ts`.
 */
export class PaymentListStore {
  private readonly positions: PaymentListPositions;
  private readonly recompute: PaymentListRecompute;
  private readonly totals: PaymentTotalsItems;
  private readonly payers: PaymentCustomersItems;
  private readonly dimensions: PaymentDimensions;
  private readonly pages: PaymentListPage;

  constructor(conn: DynamoConnection) {
    this.positions = new PaymentListPositions(conn);
    this.recompute = new PaymentListRecompute(conn);
    this.totals = new PaymentTotalsItems(conn);
    this.payers = new PaymentCustomersItems(conn);
    this.dimensions = new PaymentDimensions(conn);
    this.pages = new PaymentListPage(conn);
  }

  /**
   * Brings the list and rollups in line with one payment: writes its list items (if `c` is newer
   * than what is stored, `planListing`), removes `stale` positions, then recomputes every day and
   * month it touched. The main list item carries `pending` until the recomputes finished, so a
   * retry after a crash at any point finishes them; a payment already in line costs one read.
   *
   * With `batch`, the recomputes (and the removal of `pending`) are left to `finish(batch)`, which
   * does them once for every sync of the batch: the sessionizer's re-credit settles a batch's
   * payments first, then recomputes the union of their days and months. A crash before `finish`
   * leaves `pending` on the list items, which the retry's sync of the same payment finishes as
   * after any crash.
   *
   * @param c the payment's contribution, or null when it has none (leaves the list)
   * @param stale positions (`positionId`) the payment held before and no longer holds
   * @returns whether anything was written
   */
  async sync(
    site: string,
    c: Contribution | null,
    stale: readonly string[],
    storedRev: () => Promise<number>,
    batch?: RecomputeBatch,
  ): Promise<boolean> {
    const days: DaySlots<DimensionSlot> = new Map();
    if (!c) {
      const gone = [...new Set(stale)];
      if (gone.length === 0) return false;
      await this.removePositions(gone, days);
      if (batch) batch.add(site, days, null);
      else await this.recompute.recompute(site, days);
      return true;
    }
    const keys = listKeys(site, c);
    const [main] = keys;
    const plan = planListing(await this.positions.stored(main), c, keys.map(positionId), stale);
    if (!plan.write || !(await this.positions.put(site, c, plan.pending, plan.remove))) return false;
    // The dimension slots of its day to recompute: those of the new and the replaced contribution (same position, same day).
    addSlots(days, c.day, [...slotsOf(c), ...slotsLost(plan.lost)]);
    if ((await storedRev()) > c.rev) {
      // A newer revision settled meanwhile and may have moved the payment: take back what this one
      // wrote (only if still ours) and recompute; the newer one's own sync places it.
      await this.positions.takeBack(site, c);
      await this.recompute.recompute(site, days);
      return true;
    }
    await this.removePositions(plan.remove, days);
    const settled = plan.pending ? { key: main, rev: c.rev } : null;
    if (batch) batch.add(site, days, settled);
    else {
      await this.recompute.recompute(site, days);
      if (settled) await this.positions.settle(settled.key, settled.rev);
    }
    return true;
  }

  /**
   * Does the recomputes a batch of syncs left (`sync` with `batch`): each day once, then each
   * month once, then removes the synced list items' `pending` and `stale`, then runs the batch's
   * `after` steps in order.
   */
  async finish(batch: RecomputeBatch): Promise<void> {
    if (batch.site !== null) await this.recompute.recompute(batch.site, batch.days);
    for (const settled of batch.settled) await this.positions.settle(settled.key, settled.rev);
    for (const step of batch.after) await step();
    batch.clear();
  }

  /** Deletes the `gone` positions; each position's day joins `days` with the slots it lost (`lostWith`). */
  private async removePositions(gone: readonly string[], days: DaySlots<DimensionSlot>): Promise<void> {
    for (const id of gone) {
      const position = parsePosition(id);
      addSlots(days, dayOfPosition(position), slotsLost(lostWith(await this.positions.remove(position))));
    }
  }

  /**
   * Loads many contributions at once (bench, migration, rebuild): writes their list items with
   * BatchWriteItem, then recomputes each day and month they touch once. Only for payments no
   * other writer is changing (the list items are written unconditionally).
   * @returns the BatchWriteItem calls made
   */
  async bulkLoad(site: string, contributions: readonly Contribution[]): Promise<number> {
    const days = new Set<string>();
    const calls = await this.bulkWrite(site, contributions, days);
    await this.bulkRecompute(site, days);
    return calls;
  }

  /**
   * The first half of a bulk load taken in chunks: writes the chunk's list items with
   * BatchWriteItem and adds the local days they fall on to `days`. Nothing is recomputed: the
   * days read their list items back in `bulkRecompute`, once every chunk is in, so chunk
   * boundaries leave no trace in the items.
   * @returns the BatchWriteItem calls made
   */
  bulkWrite(site: string, contributions: readonly Contribution[], days: Set<string>): Promise<number> {
    for (const c of contributions) days.add(c.day);
    return this.positions.bulkPut(site, contributions);
  }

  /**
   * Part of a bulk load: deletes list positions (`positionId`) a payment left (its `unlisted`)
   * with BatchWriteItem and adds their local days to `days`, which `bulkRecompute` then
   * recomputes whole (every slot).
   */
  async bulkRemove(positions: readonly string[], days: Set<string>): Promise<void> {
    const keys = [...new Set(positions)].map(parsePosition);
    for (const k of keys) days.add(dayOfPosition(k));
    await this.positions.bulkRemove(keys);
  }

  /** The second half of a bulk load: each of `days` recomputed once, then their months (`PaymentListRecompute.bulkRecompute`). */
  bulkRecompute(site: string, days: Iterable<string>): Promise<void> {
    return this.recompute.bulkRecompute(site, days);
  }

  /** Period counters of `g` from `from` to `to` (inclusive), oldest first. */
  periods(site: string, g: Granularity, from: string, to: string, consistent = false): Promise<StoredPeriod[]> {
    return this.totals.periods(site, g, from, to, consistent);
  }

  /** Period payers of `g` from `from` to `to` (inclusive), oldest first. */
  customers(site: string, g: Granularity, from: string, to: string, consistent = false): Promise<PeriodCustomers[]> {
    return this.payers.read(site, g, from, to, consistent);
  }

  /** A dimension's payment counters per value, by period and bucket (`PaymentDimensions.read`). */
  dimension(site: string, d: PaymentDimension, g: Granularity, from: string, to: string, consistent = false) {
    return this.dimensions.read(site, d, g, from, to, consistent);
  }

  /** Listed payments' keys of a class, newest first (`PaymentListPage.page`). */
  page(site: string, cls: ListClass, fromDay: string, startDay: string, offset: number, limit: number) {
    return this.pages.page(site, cls, fromDay, startDay, offset, limit);
  }

  /** The first local day with a listed payment, or null. */
  firstDay(site: string): Promise<string | null> {
    return this.totals.firstDay(site);
  }

  /**
   * The list's partitions (PAYMENT_LIST and its refunded copies) of every month that has a month
   * counter: one Query of the month keys of `PT#<site>`. For deleting a retired generation
   * (`rebuild-store.ts`).
   */
  async listPartitions(site: string): Promise<string[]> {
    return (await this.totals.months(site)).flatMap((m) => [listPk(site, m), refundedPk(site, m)]);
  }
}
