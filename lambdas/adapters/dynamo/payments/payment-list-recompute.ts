import type { DynamoConnection } from '../client.js';
import { BULK_CONCURRENCY } from '../batch.js';
import { checkedBatchWrite, readChangeCounters, type CheckedPeriod } from '../change-counter.js';
import { inParallel } from '../../../domain/parallel.js';
import {
  dayCustomers,
  dayTotals,
  mergeCustomers,
  monthTotals,
  type Contribution,
} from '../../../domain/payments/contribution.js';
import { daysByMonth, monthsOf } from '../../../domain/payments/recompute-plan.js';
import { ALL_SLOTS, type DimensionSlot } from './dimension-slots.js';
import { PaymentCustomersItems } from './payment-list-customers.js';
import { PaymentDimensions, type PeriodGroup } from './payment-list-dimensions.js';
import { PaymentListPositions } from './payment-list-positions.js';
import { PaymentTotalsItems } from './payment-list-totals.js';

/** Every dimension slot: what a bulk recompute writes for each day and month. */
const ALL_SLOTS_SET: ReadonlySet<DimensionSlot> = new Set(ALL_SLOTS);

/**
 * Recomputes the payment counters of days and months from the payment list (`docs/data-model.md`,
 * "Payments: a list, and counters recomputed from it", steps 2 and 3): a period's change counter
 * (PAYMENT_CHANGE) is bumped before its inputs are read, and each result (PAYMENT_TOTALS,
 * PAYMENT_CUSTOMERS, PAYMENT_DIMENSION) is written only over one computed from an older counter,
 * so of two racing recomputes the one that saw more wins.
 */
export class PaymentListRecompute {
  private readonly positions: PaymentListPositions;
  private readonly totals: PaymentTotalsItems;
  private readonly customers: PaymentCustomersItems;
  private readonly dimensions: PaymentDimensions;

  constructor(private readonly conn: DynamoConnection) {
    this.positions = new PaymentListPositions(conn);
    this.totals = new PaymentTotalsItems(conn);
    this.customers = new PaymentCustomersItems(conn);
    this.dimensions = new PaymentDimensions(conn);
  }

  /** Recomputes each day of `days` (totals, payers and its dimension slots), then each of their months (`monthsOf`). */
  async recompute(site: string, days: ReadonlyMap<string, ReadonlySet<DimensionSlot>>): Promise<void> {
    const months = monthsOf(days);
    // Each day's and month's items are its own (their counter guards them): several at once, months after their days.
    await inParallel([...days.keys()].sort(), BULK_CONCURRENCY, (day) =>
      this.recomputeDay(site, day, days.get(day) ?? new Set()),
    );
    await inParallel([...months], BULK_CONCURRENCY, ([month, slots]) => this.recomputeMonth(site, month, slots));
  }

  /**
   * Recomputes each of `days` (`YYYY-MM-DD`, site-local) once, every dimension slot, then each of
   * their months once (`docs/data-model.md`, "The bulk recompute"). A month's days are read
   * together: their change counters (one Query), then one paged Query of the month's list
   * partition; their totals, payers and inline groups are written with BatchWriteItem, carrying the
   * counters as read (`checkedBatchWrite`), and the counters read again: a day whose counter moved
   * meanwhile is recomputed as `recomputeDay` does. A day whose dimensions need more than one item
   * is bumped and written under the guard from the month's read when the bump finds its counter one
   * above the value read, else recomputed. No counter is bumped for the days written in bulk.
   * Memory: one month's list items at a time.
   */
  async bulkRecompute(site: string, days: Iterable<string>): Promise<void> {
    const byMonth = daysByMonth(days);
    for (const [month, monthDays] of byMonth) {
      const range = this.totals.counters(site, `${month}-01`, `${month}-31`);
      const seen = await readChangeCounters(this.conn, range);
      const listed = await this.positions.month(site, month);
      const checked: CheckedPeriod[] = [];
      const guarded: string[] = [];
      for (const day of monthDays.sort()) {
        const contributions = listed.get(day) ?? [];
        const group = this.dimensions.inlineDay(site, day, contributions);
        if (!group) guarded.push(day);
        else
          checked.push({
            period: day,
            src: seen.get(day) ?? 0,
            items: [
              this.totals.item(site, 'D', day, dayTotals(day, contributions)),
              this.customers.item(site, 'D', day, dayCustomers(contributions)),
              group,
            ],
          });
      }
      const moved = await checkedBatchWrite(this.conn, range, checked);
      // Parts an older recompute left under the groups just put (a group that outgrew one item, then shrank).
      await this.dimensions.dropDayPartsUpTo(
        site,
        range.from,
        range.to,
        new Map(checked.map((c) => [c.period, c.src])),
      );
      await inParallel(guarded, BULK_CONCURRENCY, async (day) => {
        const src = await this.totals.bump(site, day);
        // The list was read before this bump, but after the counter was seen one lower: no bump came between, so
        // the read stands for one after it (what it missed, its writer bumps later and recomputes over this).
        if (src === (seen.get(day) ?? 0) + 1) await this.writeDay(site, day, src, listed.get(day) ?? [], ALL_SLOTS_SET);
        else await this.recomputeDay(site, day, ALL_SLOTS_SET);
      });
      await inParallel(moved, BULK_CONCURRENCY, (day) => this.recomputeDay(site, day, ALL_SLOTS_SET));
    }
    await inParallel(
      byMonth.map(([month]) => month),
      BULK_CONCURRENCY,
      (month) => this.recomputeMonth(site, month, ALL_SLOTS_SET),
    );
  }

  /**
   * Recomputes a day's totals, payers and the dimension `slots` from its list items (the change
   * counter bumped before the Query). The dimensions go inline into the day's group while they fit
   * one item (`PaymentDimensions`).
   */
  async recomputeDay(site: string, day: string, slots: ReadonlySet<DimensionSlot>): Promise<void> {
    const src = await this.totals.bump(site, day);
    await this.writeDay(site, day, src, await this.positions.day(site, day), slots);
  }

  /**
   * Recomputes a month's totals, payers and dimension `slots` from its days' items (same guard as
   * `recomputeDay`): the days' groups, and the buckets of the days whose group does not hold them inline.
   */
  async recomputeMonth(site: string, month: string, slots: ReadonlySet<DimensionSlot>): Promise<void> {
    const src = await this.totals.bump(site, month);
    const [from, to] = [`${month}-01`, `${month}-31`];
    const [totals, customers, days] = await Promise.all([
      this.totals.periods(site, 'D', from, to, true),
      this.customers.read(site, 'D', from, to, true),
      slots.size > 0 ? this.dimensions.groups(site, 'D', from, to, true) : new Map<string, PeriodGroup>(),
    ]);
    await Promise.all([
      this.totals.write(
        site,
        'M',
        month,
        src,
        monthTotals(
          month,
          totals.map((t) => t.totals),
        ),
      ),
      this.customers.write(site, 'M', month, src, mergeCustomers(customers)),
      slots.size > 0 ? this.dimensions.writeMonth(site, month, src, days, slots) : undefined,
    ]);
  }

  /** Writes a day's totals, payers and dimension `slots` computed from `contributions`, read after the counter became `src`. */
  private async writeDay(
    site: string,
    day: string,
    src: number,
    contributions: readonly Contribution[],
    slots: ReadonlySet<DimensionSlot>,
  ): Promise<void> {
    await Promise.all([
      this.totals.write(site, 'D', day, src, dayTotals(day, contributions)),
      this.customers.write(site, 'D', day, src, dayCustomers(contributions)),
      slots.size > 0 ? this.dimensions.writeDay(site, day, src, contributions, slots) : undefined,
    ]);
  }
}
