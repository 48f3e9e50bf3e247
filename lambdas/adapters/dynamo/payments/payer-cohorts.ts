import type { DynamoConnection } from '../client.js';
import type { RecomputeBatch } from './payment-list-batch.js';
import type { Payment } from '../../../domain/payments/payment.js';
import type { Provider } from '../../../domain/payments/facts.js';
import type { UsdRate } from '../../../domain/payments/money.js';
import { customerKey, paymentKey } from '../../../domain/payments/contribution.js';
import {
  entryChange,
  heldInLine,
  memberMove,
  payerCustomerId,
  payerProvider,
  sourcesInLine,
  statusesOf,
  type PayerFacts,
} from '../../../domain/payments/payer.js';
import { payerPaymentOf, payerSummary } from '../../../domain/reports/cohorts.js';
import type { PayerCohorts } from '../../../ports.js';
import { PayerStore } from './payer-store.js';
import { CohortRecompute } from './cohort-recompute.js';
import { summaryJson } from './cohort-member-items.js';
import { PayerBulkLoad } from './payer-bulk-load.js';

/** The payers a recompute batch waits to recompute (their states marked `pend`). */
interface Deferred {
  site: string;
  timezone: string;
  now: number;
  payers: Set<string>;
}

/**
 * Keeps retention's payer items, cohort members and cohorts in line with payments and customers
 * (`docs/retention.md`, "How it is computed: payer summaries and cohort rollups"): each payment's
 * entry, then its payer's summary, then the cohorts of the days the summary left or joined, each
 * recomputed from the items below it (never incremented), so a retry after a crash anywhere ends
 * the same. The rules are `domain/payments/payer.ts` and `domain/reports/cohorts.ts`; the items
 * are `PayerStore`, `CohortMemberStore` and `CohortStore`.
 */
export class PayerCohortStore implements PayerCohorts {
  private readonly payers: PayerStore;
  private readonly recompute: CohortRecompute;
  /** A bulk load's halves (`PayerBulkLoad`): each chunk's entries, then the payers' summaries, members, cohorts and sources. */
  readonly bulkWrite: PayerBulkLoad['write'];
  readonly bulkSummarize: PayerBulkLoad['summarize'];

  constructor(conn: DynamoConnection) {
    this.payers = new PayerStore(conn);
    this.recompute = new CohortRecompute(conn);
    const bulk = new PayerBulkLoad(conn, this.recompute);
    this.bulkWrite = bulk.write.bind(bulk);
    this.bulkSummarize = bulk.summarize.bind(bulk);
  }

  /**
   * Brings a payer's retention items in line with one of its payments: its entry takes the
   * payment's unless a newer revision wrote one (`entryChange`), then the payer's summary and
   * cohorts are recomputed. A payment already in line costs one read. Idempotent; safe after a
   * crash anywhere (the entry stays `pending` until the recompute finished; in a batch, the payer's
   * state `pend`).
   *
   * @param now ms since epoch, the caller's clock ("paying until" days before its local day are dropped)
   * @param batch when given (a re-credit of many payments), the payer recomputes wait for the
   *   batch's end (`RecomputeBatch.after`), each payer and each cohort day and month recomputed once.
   *   The payer's state is then marked `pend` once, before its first entry of the batch is written,
   *   instead of each entry `pending` (one write per payer, not two per payment: the sessionizer's write budget, `docs/benchmarks.md` "Budgets");
   *   a retry finds the mark, since only the payer's recompute clears it
   */
  async syncPayment(
    site: string,
    timezone: string,
    payment: Payment,
    rate: UsdRate,
    now: number,
    batch?: RecomputeBatch,
  ): Promise<void> {
    const payer = customerKey(payment);
    const key = paymentKey(payment);
    const entry = payerPaymentOf(payment, rate);
    const wanted = entry ? JSON.stringify(entry) : null;
    const change = entryChange(await this.payers.entry(site, payer, key), payment.rev, wanted);
    if (change === 'none') return;
    if (change === 'inLine') {
      // In a batch, the retry of one that crashed before its payers' recomputes finished finds their marks.
      if (batch && (await this.payers.state(site, payer))?.pend) this.defer(batch, site, timezone, now, payer);
      return;
    }
    if (batch && !this.deferred.get(batch)?.payers.has(payer)) await this.payers.markOwed(site, payer);
    const written = await this.payers.putEntry(site, payer, key, payment.rev, wanted, !batch);
    // Not written: a newer revision's entry is in, and its own sync recomputes the payer; in a batch, this one's mark is released too.
    if (batch) this.defer(batch, site, timezone, now, payer);
    if (batch || !written) return;
    await this.recomputePayer(site, timezone, payer, now);
    await this.payers.settle(site, payer, key, payment.rev);
  }

  /** The payers (and their pending payment items) a recompute batch waits to recompute. */
  private readonly deferred = new WeakMap<RecomputeBatch, Deferred>();

  private defer(batch: RecomputeBatch, site: string, timezone: string, now: number, payer: string): void {
    let waiting = this.deferred.get(batch);
    if (!waiting) {
      const created: Deferred = { site, timezone, now, payers: new Set<string>() };
      this.deferred.set(batch, created);
      batch.after.push(async () => {
        this.deferred.delete(batch);
        await this.finishDeferred(created);
      });
      waiting = created;
    }
    waiting.payers.add(payer);
  }

  /** A batch's end: each payer recomputed, then the cohort days and months they touched once, then their states released. */
  private async finishDeferred(w: Deferred): Promise<void> {
    const days = new Set<string>();
    const release: Array<() => Promise<void>> = [];
    for (const payer of [...w.payers].sort()) {
      const done = await this.recomputePayer(w.site, w.timezone, payer, w.now, days);
      if (done) release.push(done);
    }
    await this.recompute.days(w.site, w.timezone, [...days].sort(), w.now);
    for (const done of release) await done();
  }

  /**
   * Takes a payment away from a payer it no longer belongs to (its customer id changed, or it was
   * folded into another payment), then recomputes that payer. Idempotent.
   */
  async dropPayment(site: string, timezone: string, payer: string, paymentKey: string, now: number): Promise<void> {
    await this.payers.deleteEntry(site, payer, paymentKey);
    // Always recomputed (a read when in line): a crash after the delete left the summary to mend.
    await this.recomputePayer(site, timezone, payer, now);
  }

  /** Recomputes a provider customer's summary after its CUSTOMER item changed (subscription statuses; a new customer is a status source). */
  async syncCustomer(site: string, timezone: string, provider: string, customerId: string, now: number): Promise<void> {
    await this.recomputePayer(site, timezone, `${provider}:${customerId}`, now);
  }

  /** The payments of a payer that hold an entry: every payment of it that was ever countable (keys only, pages of 200). */
  async payerPaymentKeys(site: string, payer: string): Promise<Array<{ provider: Provider; id: string }>> {
    return this.payers.paymentKeys(site, payer);
  }

  /** A payer's summary from its entries and its customer's statuses, read consistently and together. */
  private async readPayer(site: string, payer: string, timezone: string): Promise<PayerFacts> {
    const customerId = payerCustomerId(payer);
    const [customer, entries] = await Promise.all([
      customerId === null ? Promise.resolve(undefined) : this.payers.customer(site, payerProvider(payer), customerId),
      this.payers.entries(site, payer),
    ]);
    const statuses = statusesOf(customer);
    return { summary: payerSummary(entries, statuses, timezone), statuses, customerExists: customer !== undefined };
  }

  /**
   * Recomputes a payer's summary and moves its member item, then the cohorts of every day (and
   * month) it left or joined. Reads first: when the stored member, the days held and the status
   * sources already match, and no recompute was left half done (`pend`), nothing is written.
   * Otherwise the payer's counter is bumped before reading again, and the member is written only
   * over one computed from an older counter, so of two racing recomputes the one that read later wins.
   *
   * @param collect when given, the cohort days to recompute are added to it and the payer's
   *   release (its state's `pend`) is returned, to run after the caller recomputed them
   */
  private async recomputePayer(
    site: string,
    timezone: string,
    payer: string,
    now: number,
    collect?: Set<string>,
  ): Promise<(() => Promise<void>) | null> {
    const provider = payerProvider(payer);
    const { members, cohorts } = this.recompute;
    const [state, before, { sources }] = await Promise.all([
      this.payers.state(site, payer),
      this.readPayer(site, payer, timezone),
      cohorts.sourceFlags(site, true),
    ]);
    const dayBefore = before.summary?.day ?? null;
    if (!state?.pend && sourcesInLine(provider, before, sources) && heldInLine(state?.held ?? [], dayBefore)) {
      const stored = dayBefore === null ? null : await members.storedSummary(site, dayBefore, payer);
      if (stored === summaryJson(before.summary)) return null;
    }
    const { src, held } = await this.payers.bump(site, payer);
    const facts = await this.readPayer(site, payer, timezone);
    if (!sourcesInLine(provider, facts, sources)) await cohorts.markSource(site, provider, facts.statuses.length > 0);
    const day = facts.summary?.day ?? null;
    if (facts.summary) {
      if (!held.includes(facts.summary.day)) await this.payers.hold(site, payer, facts.summary.day);
      await members.put(site, payer, facts.summary, src);
    }
    const move = memberMove(held, day);
    for (const d of move.left) await members.deleteBefore(site, d, payer, src);
    const release = () => this.payers.release(site, payer, src, day);
    if (collect) {
      for (const d of move.days) collect.add(d);
      return release;
    }
    await this.recompute.days(site, timezone, move.days, now);
    await release();
    return null;
  }
}
