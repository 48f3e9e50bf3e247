import type { Contribution } from '../../../domain/payments/contribution.js';
import type { Payment } from '../../../domain/payments/payment.js';
import type { DerivedPaymentSync } from '../../../ports.js';
import type { RecomputeBatch } from './payment-list-batch.js';
import type { PaymentListStore } from './payment-list-store.js';
import type { PaymentRecords } from './payment-store-records.js';
import type { PaymentTimeline } from './payment-store-timeline.js';

/**
 * What a payment's change derives across its item families (`docs/data-model.md`, "Payments"): its
 * list items and the counters of the days and months they touch (`PaymentListStore.sync`), and its
 * copy in the visitor's partition (`PaymentTimeline.place`).
 */
export class DerivedPayments implements DerivedPaymentSync {
  constructor(
    private readonly records: PaymentRecords,
    private readonly list: PaymentListStore,
    private readonly timeline: PaymentTimeline,
  ) {}

  /**
   * Brings a payment's derived items in line with it. Each takes only a newer `rev` of the payment,
   * so replays and races settle on the newest state. Positions in `payment.unlisted` are removed,
   * then forgotten (`PaymentRecords.clearUnlisted`).
   *
   * With `batch`, the list's recomputes and the forgetting of `unlisted` wait for
   * `finishSync(batch)` (`PaymentListStore.sync`).
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
      (await this.records.getPayment(payment.site, payment.provider, payment.provider_payment_id))?.rev ??
      Number.MAX_SAFE_INTEGER;
    await this.list.sync(payment.site, contribution, unlisted, storedRev, batch);
    if (unlisted.length > 0) {
      const forget = () => this.records.clearUnlisted(payment);
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
}
