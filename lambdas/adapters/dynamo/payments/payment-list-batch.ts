import type { RecomputeBatch as RecomputeBatchPort } from '../../../ports.js';
import { addSlots, type DaySlots } from '../../../domain/payments/recompute-plan.js';
import type { DimensionSlot } from './dimension-slots.js';
import type { Position } from './payment-list-positions.js';

/** A synced main list item whose `pending` and `stale` to remove once its days are recomputed, if it still holds `rev`. */
export interface Settled {
  key: Position;
  rev: number;
}

/**
 * The recomputes that many syncs of one site leave to one pass (`PaymentListStore.sync` with a
 * batch, then `PaymentListStore.finish`): per day, the union of the dimension slots its syncs
 * touched (a day is not recomputed for another day's payments' slots), the list items whose
 * `pending` to clear, and steps to run after (a payment forgetting the positions it left).
 * Reusable after `finish`.
 */
export class RecomputeBatch implements RecomputeBatchPort {
  site: string | null = null;
  readonly days: DaySlots<DimensionSlot> = new Map();
  readonly settled: Settled[] = [];
  readonly after: Array<() => Promise<void>> = [];

  /** Adds one sync's days and settled item; a batch is for one site. */
  add(site: string, days: DaySlots<DimensionSlot>, settled: Settled | null): void {
    if (this.site !== null && this.site !== site)
      throw new Error(`a recompute batch is for one site: ${this.site}, not ${site}`);
    this.site = site;
    for (const [day, slots] of days) addSlots(this.days, day, slots);
    if (settled) this.settled.push(settled);
  }

  clear(): void {
    this.site = null;
    this.days.clear();
    this.settled.length = 0;
    this.after.length = 0;
  }
}
