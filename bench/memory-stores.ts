import type { Visit } from '../lambdas/domain/visit.js';
import type { Payment } from '../lambdas/domain/payments/payment.js';
import type { Customer } from '../lambdas/domain/payments/customer.js';
import type { Provider } from '../lambdas/domain/payments/facts.js';
import type { UsdRate } from '../lambdas/domain/payments/money.js';
import type { Contribution } from '../lambdas/domain/payments/contribution.js';
import { customerKey, paymentKey } from '../lambdas/domain/payments/contribution.js';
import type {
  CustomerStore,
  DerivedPaymentSync,
  PaymentBulkLoad,
  PaymentBulkLoads,
  PaymentRecordStore,
  PaymentTimelineStore,
  PayerCohorts,
  PendingCreditStore,
  RecomputeBatch,
  RollupStore,
  StreamCheckpoint,
  VisitStore,
  VisitsAndPayments,
} from '../lambdas/ports.js';
import type { RollupDelta, RollupKey } from '../lambdas/domain/rollup.js';
import { PK, SK } from '../lambdas/adapters/dynamo/table.js';
import { foldGroup, type LoggedDelta } from '../lambdas/adapters/dynamo/rollup-fold.js';
import { partSk, partType, rollupPk } from '../lambdas/adapters/dynamo/rollup-keys.js';

/**
 * In-memory stand-ins for the two stores the bench site's loader runs the
 * real sessionizer (`sessionizeBatch`) and the real payment service
 * (`applyProviderFacts`) against, so that a year of a large site is computed
 * by the product's own code without a DynamoDB round trip per visitor or
 * payment (`bench/bench-site.ts`). They keep the semantics of the DynamoDB
 * stores that the services rely on (conditional writes by version, copies
 * rather than shared objects, visits returned by overlap with a window); the
 * loader then writes what they hold with the DynamoDB stores' bulk paths.
 * `test/bench/bench-site.test.ts` shows the result equals the DynamoDB path.
 */

/**
 * Rollups in memory (the `RollupStore` port): each batch's deltas folded
 * into their buckets' items with `foldGroup`, exactly as the compactor folds
 * the rollup log (`DynamoRollupStore.compact`: a bucket's parts, overflow
 * parts of dimension buckets included, `p` on part 0 when there are
 * several, a `visits` bucket's counters and visitor set, `seq` per shard,
 * `ver` per write), the batch being one log part.
 * A year of rollups then costs one write per item, not a log part per batch
 * and a conditional write per item and compaction. A batch at or before the
 * shard's last one is skipped, as the log state does.
 */
export class MemoryRollupStore implements RollupStore {
  private readonly buckets = new Map<string, { key: RollupKey; parts: Array<Record<string, unknown> | undefined> }>();
  private readonly last = new Map<string, bigint>();

  async apply(deltas: readonly RollupDelta[], checkpoint: StreamCheckpoint): Promise<void> {
    const sequence = BigInt(checkpoint.sequence);
    if ((this.last.get(checkpoint.shard) ?? -1n) >= sequence) return;
    this.last.set(checkpoint.shard, sequence);
    const byBucket = new Map<string, LoggedDelta[]>();
    for (const delta of deltas) {
      const id = `${delta.key.site}|${delta.key.metric}|${delta.key.granularity}|${delta.key.period}|${delta.key.bucket}`;
      const list = byBucket.get(id);
      const entry = { shard: checkpoint.shard, position: { sequence, part: 0 }, delta };
      if (list) list.push(entry);
      else byBucket.set(id, [entry]);
    }
    for (const [id, logged] of byBucket) {
      const { key } = (logged[0] as LoggedDelta).delta;
      const bucket = this.buckets.get(id) ?? { key, parts: [] };
      const { folded, count } = foldGroup(bucket.parts, logged);
      for (const [i, part] of folded.entries()) {
        if (!part) continue;
        const version = Number(bucket.parts[i]?.ver ?? 0);
        bucket.parts[i] = {
          [PK]: rollupPk(key.site, key.metric),
          [SK]: partSk(key, i),
          ...part.attributes,
          ...(i === 0 && count > 1 ? { p: count } : {}),
          type: partType(key.metric, i),
          seq: part.seq,
          ver: version + 1,
        };
      }
      this.buckets.set(id, bucket);
    }
  }

  /** The ROLLUP items as the compactor leaves them after folding every batch (`ver` counts this store's writes). */
  *rollupItems(): Generator<Record<string, unknown>> {
    for (const { parts } of this.buckets.values()) for (const part of parts) if (part) yield part;
  }

  /** Items held. */
  get size(): number {
    let n = 0;
    for (const { parts } of this.buckets.values()) n += parts.filter(Boolean).length;
    return n;
  }
}

/**
 * Visits by visitor, in memory (the `VisitStore` port). To keep a year of a
 * site with millions of visitors within memory, `evictEndedBefore` drops the
 * visits that no later event can touch, except those of visitors `keep`
 * selects (the bench's payers: their visits are credited later). Visits are
 * shared, not copied: the sessionizer and the payment service build new
 * visits and never change one they read.
 */
export class MemoryVisitStore implements VisitStore {
  /** Visits of the visitors `keep` selects (kept for ever), and of the others (dropped once ended). */
  private readonly kept = new Map<string, Visit[]>();
  private readonly transient = new Map<string, Visit[]>();

  constructor(private readonly keep: (visitorId: string) => boolean) {}

  /** The map a visitor's visits live in: eviction walks only the transient one, not the payers' (most of the memory). */
  private mapOf(visitorId: string): Map<string, Visit[]> {
    return this.keep(visitorId) ? this.kept : this.transient;
  }

  /** Visits of a visitor ending at or after `fromMs` and starting at or before `toMs` (ms), oldest first; copies. */
  async visitsAround(site: string, visitorId: string, fromMs: number, toMs: number): Promise<Visit[]> {
    return (this.mapOf(visitorId).get(`${site}\n${visitorId}`) ?? []).filter((v) => v.end >= fromMs && v.start <= toMs);
  }

  /**
   * `visitsAround`, with no payments marker kept in memory: `latestPayment`
   * is the latest time there is, so the sessionizer's re-credit looks up
   * every visitor of a batch, as for a site without markers.
   */
  async visitsAndPayments(site: string, visitorId: string, fromMs: number, toMs: number): Promise<VisitsAndPayments> {
    const all = this.mapOf(visitorId).get(`${site}\n${visitorId}`) ?? [];
    return {
      visits: await this.visitsAround(site, visitorId, fromMs, toMs),
      latestPayment: Number.MAX_SAFE_INTEGER,
      later: all.some((v) => v.start > toMs),
    };
  }

  async writeVisits(put: readonly Visit[], remove: readonly Visit[]): Promise<void> {
    for (const v of remove) {
      const map = this.mapOf(v.visitor_id);
      const key = `${v.site}\n${v.visitor_id}`;
      const list = (map.get(key) ?? []).filter((s) => s.id !== v.id);
      if (list.length > 0) map.set(key, list);
      else map.delete(key);
    }
    for (const v of put) {
      const map = this.mapOf(v.visitor_id);
      const key = `${v.site}\n${v.visitor_id}`;
      const list = (map.get(key) ?? []).filter((s) => s.id !== v.id);
      list.push(v);
      list.sort((a, b) => a.start - b.start);
      map.set(key, list);
    }
  }

  async firstVisit(site: string, visitorId: string): Promise<Visit | null> {
    return this.mapOf(visitorId).get(`${site}\n${visitorId}`)?.[0] ?? null;
  }

  /** Every stored visit of a visitor, oldest first (not copies: do not change them). */
  visitsOf(site: string, visitorId: string): readonly Visit[] {
    return this.mapOf(visitorId).get(`${site}\n${visitorId}`) ?? [];
  }

  /**
   * Drops visits that ended before `ms` of visitors `keep` does not select.
   * Safe when every later event has `ts` ≥ `ms` + 30 minutes (the visit gap):
   * the sessionizer then never reads them again. Walks only those visitors
   * (the last hours' of traffic), so a load's eviction costs no more with
   * a million payers kept than with a thousand.
   */
  evictEndedBefore(ms: number): void {
    for (const [key, list] of this.transient) {
      const live = list.filter((v) => v.end >= ms);
      if (live.length === 0) this.transient.delete(key);
      else if (live.length !== list.length) this.transient.set(key, live);
    }
  }

  /** Ids of the visitors of `site` with stored visits. */
  *visitors(site: string): Generator<string> {
    for (const map of [this.kept, this.transient])
      for (const key of map.keys()) if (key.startsWith(`${site}\n`)) yield key.slice(site.length + 1);
  }

  /** Visitors with stored visits. */
  get size(): number {
    return this.kept.size + this.transient.size;
  }
}

/**
 * Payments, aliases, customers and pending credits in memory (the payment
 * service's family ports, `ports()`). The derived items (list, counters, timeline copies)
 * are not kept: the loader writes them from the payments with
 * `DynamoPaymentBulkLoads.bulkLoader`, which writes what `syncDerived` would.
 */
export class MemoryPaymentStore
  implements
    PaymentRecordStore,
    CustomerStore,
    PaymentTimelineStore,
    PendingCreditStore,
    DerivedPaymentSync,
    PaymentBulkLoads
{
  readonly payments = new Map<string, Payment>();
  readonly customers = new Map<string, Customer>();
  readonly aliases = new Map<string, string>();
  readonly pending = new Map<string, { site: string; provider: Provider; id: string; until: number }>();

  /**
   * Retention's payer summaries and cohorts are derived items too: the
   * loader's bulk load writes them, so syncs do nothing
   * here; a payer's payments are read from the payments held.
   */
  readonly cohorts: PayerCohorts = {
    syncPayment: async () => {},
    dropPayment: async () => {},
    syncCustomer: async () => {},
    payerPaymentKeys: async (site, payer) =>
      [...this.payments.values()]
        .filter((p) => p.site === site && customerKey(p) === payer)
        .map((p) => ({ provider: p.provider, id: p.provider_payment_id })),
  };

  /** This store as the payment service's ports, one per item family (`PaymentDeps`). */
  ports() {
    return { payments: this, customers: this, timeline: this, pending: this, derived: this, payers: this.cohorts };
  }

  private static key(site: string, provider: Provider, id: string): string {
    return `${site}\n${provider}\n${id}`;
  }

  async findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]> {
    const found = new Set<string>();
    for (const id of ids) {
      const to = this.aliases.get(MemoryPaymentStore.key(site, provider, id));
      if (to !== undefined) found.add(to);
    }
    return [...found].sort();
  }

  async repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) this.aliases.set(MemoryPaymentStore.key(site, provider, id), paymentId);
  }

  async deletePayment(site: string, provider: Provider, id: string): Promise<void> {
    this.payments.delete(MemoryPaymentStore.key(site, provider, id));
  }

  async linkAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void> {
    for (const id of new Set([paymentId, ...ids])) {
      const key = MemoryPaymentStore.key(site, provider, id);
      if (!this.aliases.has(key)) this.aliases.set(key, paymentId);
    }
  }

  async getPayment(site: string, provider: Provider, id: string): Promise<Payment | null> {
    const p = this.payments.get(MemoryPaymentStore.key(site, provider, id));
    return p ? structuredClone(p) : null;
  }

  async putPayment(payment: Payment, expectedRev: number): Promise<boolean> {
    const key = MemoryPaymentStore.key(payment.site, payment.provider, payment.provider_payment_id);
    const stored = this.payments.get(key);
    if ((stored?.rev ?? 0) !== expectedRev) return false;
    this.payments.set(key, structuredClone(payment));
    return true;
  }

  async listPayments(site: string): Promise<Payment[]> {
    return [...this.payments.values()].filter((p) => p.site === site).map((p) => structuredClone(p));
  }

  async getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]> {
    return keys.flatMap((k) => {
      const p = this.payments.get(MemoryPaymentStore.key(k.site, k.provider, k.id));
      return p ? [structuredClone(p)] : [];
    });
  }

  async getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null> {
    const c = this.customers.get(MemoryPaymentStore.key(site, provider, customerId));
    return c ? structuredClone(c) : null;
  }

  async putCustomer(customer: Customer): Promise<boolean> {
    const key = MemoryPaymentStore.key(customer.site, customer.provider, customer.customer_id);
    if ((this.customers.get(key)?.ver ?? 0) !== customer.ver - 1) return false;
    this.customers.set(key, structuredClone(customer));
    return true;
  }

  async listCustomers(site: string): Promise<Customer[]> {
    return [...this.customers.values()].filter((c) => c.site === site).map((c) => structuredClone(c));
  }

  /** What `DerivedPayments.syncDerived` does to the payment itself: forgets `unlisted` once its positions are gone. */
  async syncDerived(
    payment: Payment,
    _contribution: Contribution | null,
    _previous: { visitor: string | null; ts: number | null } | null,
  ): Promise<void> {
    const key = MemoryPaymentStore.key(payment.site, payment.provider, payment.provider_payment_id);
    const stored = this.payments.get(key);
    if (stored && stored.rev === payment.rev && stored.unlisted) {
      const { unlisted: _gone, ...rest } = stored;
      this.payments.set(key, rest);
    }
  }

  /** Nothing waits for a batch's end in memory: `syncDerived` keeps no counters and forgets `unlisted` at once. */
  async finishSync(batch: RecomputeBatch): Promise<void> {
    batch.clear();
  }

  async visitorPayments(site: string, visitorId: string): Promise<Array<{ provider: Provider; id: string }>> {
    return [...this.payments.values()]
      .filter((p) => p.site === site && p.visitor === visitorId)
      .sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0))
      .map((p) => ({ provider: p.provider, id: p.provider_payment_id }));
  }

  async markPending(site: string, payment: Payment, until: number): Promise<void> {
    this.pending.set(`${site}\n${paymentKey(payment)}`, {
      site,
      provider: payment.provider,
      id: payment.provider_payment_id,
      until,
    });
  }

  async clearPending(site: string, payment: Payment): Promise<void> {
    this.pending.delete(`${site}\n${paymentKey(payment)}`);
  }

  async listPending(site: string): Promise<Array<{ provider: Provider; id: string; until: number }>> {
    return [...this.pending.values()]
      .filter((p) => p.site === site)
      .map(({ provider, id, until }) => ({ provider, id, until }));
  }

  /** What `DynamoPaymentBulkLoads.bulkLoader` does to the payments themselves: stores them (unless `writePayments` is false). */
  bulkLoader(
    _site: string,
    _timezone: string,
    _rate: UsdRate,
    options: { writePayments?: boolean } = {},
  ): PaymentBulkLoad {
    return {
      add: async (payments) => {
        if (options.writePayments ?? true)
          for (const p of payments)
            this.payments.set(MemoryPaymentStore.key(p.site, p.provider, p.provider_payment_id), structuredClone(p));
      },
      // No list is kept here: nothing to take positions out of.
      unlist: async () => undefined,
      finish: async () => undefined,
    };
  }

  /** A site's payments, `limit` at a time (all at once without it). */
  async *paymentPages(site: string, limit?: number): AsyncGenerator<Payment[]> {
    const all = await this.listPayments(site);
    const size = Math.max(1, limit ?? all.length);
    for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
  }

  /**
   * Takes every payment, customer and pending credit out of the store, and
   * forgets the aliases (the loader writes a batch of customers whose
   * webhooks are all applied: no later webhook looks them up).
   */
  drain(): {
    payments: Payment[];
    customers: Customer[];
    pending: Array<{ site: string; payment: Payment; until: number }>;
  } {
    const out = {
      payments: [...this.payments.values()],
      customers: [...this.customers.values()],
      pending: [...this.pending.values()].flatMap((p) => {
        const payment = this.payments.get(MemoryPaymentStore.key(p.site, p.provider, p.id));
        return payment ? [{ site: p.site, payment, until: p.until }] : [];
      }),
    };
    this.payments.clear();
    this.customers.clear();
    this.pending.clear();
    this.aliases.clear();
    return out;
  }
}
