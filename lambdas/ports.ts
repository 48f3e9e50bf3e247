import type { TrackedEvent } from './domain/tracked-event.js';
import type { SiteConfig } from './domain/site.js';
import type { Visit } from './domain/visit.js';
import type { Dimension, Granularity, PaymentDimension, RollupDelta, RollupMetric } from './domain/rollup.js';
import type { Filter } from './domain/reports/filters.js';
import type { FilteredGoalCounts, FilteredInput, FilteredSeries, SummedInterval } from './domain/reports/filtered.js';
import type { PaymentTableRow, VisitRow } from './domain/visit-table.js';
import type { PropKeyCounts } from './domain/reports/prop-keys.js';
import type { Payment } from './domain/payments/payment.js';
import type { Customer } from './domain/payments/customer.js';
import type { Provider } from './domain/payments/facts.js';
import type {
  Contribution,
  ListClass,
  PeriodCustomers,
  PeriodTotals,
  ValueCounters,
} from './domain/payments/contribution.js';
import type { UsdRate } from './domain/payments/money.js';
import type { PeriodSpan } from './domain/reports/periods.js';
import type { VisitorSketch } from './domain/visitor-sketch.js';
import type { RealtimeSlice } from './domain/realtime.js';
import type { RetentionCohorts } from './domain/reports/retention.js';
import type { PayerSummary } from './domain/reports/cohorts.js';
import type { ImportState, ImportedMetric, ImportedPeriod } from './domain/imported/aggregate.js';
import { portMethods } from './forward-port.js';

/**
 * The event stream (Kinesis in AWS, the durable local stream on a laptop).
 * `put` resolves only once every event is durably written; otherwise it throws
 * `UnavailableError` and the caller answers 503 so the client retries.
 */
export interface EventStream {
  put(events: readonly TrackedEvent[]): Promise<void>;
}

/**
 * The archive's delivery as the sessionizer forwards a raw object's events to it
 * (`docs/ingestion.md`, "Archive packed"): one JSON event a line, without the newline.
 * @throws UnavailableError when the delivery did not take every line
 */
export interface ArchiveDelivery {
  put(lines: readonly Buffer[]): Promise<void>;
}

/** Looks up a site's configuration by its domain (lowercase). */
export interface SiteDirectory {
  getSite(domain: string): Promise<SiteConfig | null>;
}

/** The daily salts of visitor hashes: one random salt per UTC day, shared by every instance. */
export interface SaltStore {
  /** Salt of `day` (`YYYY-MM-DD`, UTC), created on first use; salts of older days are deleted. */
  saltFor(day: string): Promise<string>;
}

/** Where the sessionizer keeps visits (items VISIT, `docs/data-model.md`). */
export interface VisitStore {
  /** Visits of a visitor that end at or after `fromMs` and start at or before `toMs` (ms since epoch). */
  visitsAround(site: string, visitorId: string, fromMs: number, toMs: number): Promise<Visit[]>;
  /**
   * `visitsAround`, and in the same request the latest time (ms) of any
   * payment placed on the visitor's timeline (the VISITOR_PAYMENTS marker),
   * null when there is none.
   */
  visitsAndPayments(
    site: string,
    visitorId: string,
    fromMs: number,
    toMs: number,
    options?: VisitReadOptions,
  ): Promise<VisitsAndPayments>;
  /** Writes `put` and deletes `remove` (visits merged away or moved). Idempotent. */
  writeVisits(put: readonly Visit[], remove: readonly Visit[]): Promise<void>;
  /** The visitor's first visit ever on the site, or null. */
  firstVisit(site: string, visitorId: string): Promise<Visit | null>;
}

/** How `VisitStore.visitsAndPayments` reads. */
export interface VisitReadOptions {
  /**
   * false: an eventually consistent read (half the read units), for a caller
   * that knows every write to the partition's visits finished long enough
   * ago (`ShardVisitCache`). Default true.
   */
  consistent?: boolean;
}

/** What `VisitStore.visitsAndPayments` found. */
export interface VisitsAndPayments {
  visits: Visit[];
  /** The VISITOR_PAYMENTS marker's time (ms), null when there is none. */
  latestPayment: number | null;
  /** Whether the partition holds a visit that starts after `toMs` (left out of `visits`). */
  later: boolean;
}

/**
 * The recent raises of visitors' payments markers in one namespace
 * (RECENT_PAYMENT_MARK, `docs/data-model.md`): what a reader that did not read
 * a visitor's marker since `fromMs` (ms) needs to learn of it.
 */
export interface RecentPaymentMarks {
  /**
   * Raises at or after `fromMs`, strongly consistent: per visitor the highest
   * marker time raised (ms); `reset` when a bulk load rewrote markers of any
   * visitors in that time (then no visitor's marker may be taken as known).
   */
  since(site: string, fromMs: number): Promise<{ latest: Map<string, number>; reset: boolean }>;
}

/** An object of the raw delivery the sessionizer has journaled: its journal number and S3 key. */
export interface JournalEntry {
  n: number;
  key: string;
}

/**
 * The sessionizer's journal of raw objects (INGEST items, `docs/data-model.md`): the order in which
 * it takes the objects Firehose delivered, which S3's notifications do not give
 * (`docs/ingestion.md`, "Choosing the ingestion path"). One writer at a time.
 */
export interface IngestJournal {
  /** Gives `key` the next journal number, or returns null when the object was journaled already. */
  add(key: string): Promise<number | null>;
  /** The last journal number sessionized (0 before the first). */
  done(): Promise<number>;
  /** Up to `limit` entries numbered after `after`, in journal order. */
  pending(after: number, limit: number): Promise<JournalEntry[]>;
  /** Records that entry `n` and every one before it are sessionized. */
  advance(n: number): Promise<void>;
  /**
   * Whether entry `n` is the one the journal names for `key` (its archive forward is that entry's):
   * false when `key` was journaled again under another number (an `add` broke off before naming its
   * entry, and a later notification or sweep added the object anew). When no entry is named, names `n`.
   */
  claim(key: string, n: number): Promise<boolean>;
}

/** The raw objects a delivery stream wrote (S3 `raw/`; locally files under the data directory). */
export interface RawObjects {
  /**
   * The object's bytes (records as Firehose concatenated them, each ending in a newline), or null
   * when there is no such object (expired by the bucket's lifecycle before it was read).
   * @throws Error when the object cannot be read now (the batch is retried)
   */
  get(key: string): Promise<Buffer | null>;
  /** Keys of the objects written at or after `sinceMs` (ms, UTC), for the sweep that catches missed notifications. */
  listSince(sinceMs: number): Promise<string[]>;
}

/** The position of a batch in its stream: applied at most once per rollup item. */
export interface StreamCheckpoint {
  shard: string;
  /** The batch's last sequence number (Kinesis: a decimal string). */
  sequence: string;
}

/** Where the sessionizer keeps rollups (items ROLLUP, `docs/data-model.md`). */
export interface RollupStore {
  /**
   * Adds each delta to its item unless the item already holds this shard's
   * `checkpoint` or a later one — so a retried, duplicated or bisected batch
   * changes nothing twice.
   */
  apply(deltas: readonly RollupDelta[], checkpoint: StreamCheckpoint): Promise<void>;
}

/**
 * The visit table behind filtered reports (`docs/data-model.md`, "Filtered
 * reports"): one Parquet file per site and site-local month, its text
 * dimensions as ids of the site's dictionary (S3; locally files through DuckDB).
 */
export interface VisitTable {
  /**
   * Replaces the site's `month` (`YYYY-MM`) with `rows`, every visit that
   * started in that site-local month, and stores the dictionary entries they add.
   * @throws Error when a row's day is not in `month`, or the table cannot be written
   */
  writeMonth(site: string, month: string, rows: readonly VisitRow[]): Promise<void>;
}

/** The raw event archive (Parquet on S3 through Athena; local Parquet through DuckDB). */
export interface ArchiveReader {
  /**
   * Runs the query for a site's events whose partition day `dt` (UTC) is in
   * `fromDt`..`toDt`, and resolves once the engine has the whole result, so a
   * failed query is known before anything is changed. The pages come in time
   * order (ties by event id).
   * @throws Error with the engine's message when the query fails
   */
  events(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<TrackedEvent[]>>;
  /** The first partition day (`dt`, UTC `YYYY-MM-DD`) holding an event of the site, or null when none does. @throws Error with the engine's message */
  firstDay(site: string): Promise<string | null>;
  /**
   * The distinct visitor ids of a site's events in `fromDt`..`toDt`, in pages
   * (a rebuild deletes a replaced generation's visits by visitor: its VISIT
   * partitions are keyed by visitor, and nothing may scan the table).
   * @throws Error with the engine's message when the query fails
   */
  visitors(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<string[]>>;
}

/**
 * What a sealed secret is bound to: the site (domain) and provider whose
 * webhooks it signs. A sealed secret opens only with the same context, so one
 * copied to another site's or provider's item does not open (`docs/security.md`).
 */
export interface SecretContext {
  site: string;
  provider: string;
}

/**
 * Encrypts webhook signing secrets at rest (`docs/security.md`): sealed to the stack's key pair
 * in Parameter Store in AWS, a key file in the data directory on a laptop. Sealed strings are JSON
 * (`{v:1, x25519|kms|local, …, iv, tag, ct}`, `lambdas/adapters/secrets/sealed.ts`).
 */
export interface SecretBox {
  /** Encrypts `plaintext` (UTF-8) bound to `context`; the result is a JSON string under 2 KiB for a 512-character secret. */
  seal(plaintext: string, context: SecretContext): Promise<string>;
  /** The plaintext of `seal`. @throws SecretUnreadableError when `sealed` is tampered with, sealed by another key, or bound to another context */
  open(sealed: string, context: SecretContext): Promise<string>;
}

/**
 * Deletes raw events from the archive (the local Parquet directory; the events
 * bucket in AWS): a deleted site's partitions (`docs/deploy.md`, "Deleting a site").
 */
export interface ArchiveEraser {
  /**
   * Deletes every file of the site's partitions (`site=<domain>/`, every `dt`).
   * Safe to repeat: a second call finds nothing.
   * @returns files (objects) deleted
   */
  deleteSite(site: string): Promise<number>;
  /**
   * Rewrites every file of the site's partitions that holds an event of
   * `visitors` without those events (a person's erasure, `docs/security.md`).
   * Safe to repeat.
   * @returns files rewritten and events removed
   */
  eraseVisitors(site: string, visitors: readonly string[]): Promise<{ files: number; events: number }>;
}

/**
 * The SITE item's generation steps a rebuild takes (`docs/rebuild.md`): each a conditional write
 * from the state the step starts from, resolving with the site as written.
 * @throws GenerationConflictError when the SITE item is in another state; NotFoundError when there is no such site
 */
export interface SiteGenerations extends SiteDirectory {
  /** Marks `generation` as being built: refused while another one is built or a replaced one awaits deletion. */
  beginBuilding(domain: string, generation: number): Promise<SiteConfig>;
  /** Makes the built generation live and the live one retired, in one write. */
  switchGeneration(domain: string, generation: number): Promise<SiteConfig>;
  /** Gives up the generation being built, leaving it to be deleted as `retired`. */
  abandonBuilding(domain: string, generation: number): Promise<SiteConfig>;
  /** Forgets the retired generation once its items are deleted. */
  clearRetired(domain: string, generation: number): Promise<SiteConfig>;
}

/** Where a rebuild of one generation got to: the last batch whose visits and rollups are written. */
export interface RebuildCheckpoint {
  generation: number;
  /** RFC 3339: when the rebuild of this generation began. */
  started: string;
  /** Batches of the archive sessionized so far (their sequence numbers are 1..batches). */
  batches: number;
  /** Events sessionized so far. */
  events: number;
  /** The last event sessionized (archive order: ts, then event id), or null before the first batch. */
  after: { ts: number; id: string } | null;
}

/** A rebuild's own items (REBUILD, `docs/data-model.md`) and the deletion of a replaced generation's data. */
export interface RebuildStore {
  /** A new generation number for the site, above `floor` and every one begun before. */
  nextGeneration(domain: string, floor: number): Promise<number>;
  /** The checkpoint of a generation being built, or null before its first batch. */
  checkpoint(domain: string, generation: number): Promise<RebuildCheckpoint | null>;
  saveCheckpoint(domain: string, checkpoint: RebuildCheckpoint): Promise<void>;
  deleteCheckpoint(domain: string, generation: number): Promise<void>;
  /** The visitors of the payments stored in the data namespace `ns` (a payment's visitor may have no archived event). */
  paymentVisitors(ns: string): Promise<string[]>;
  /**
   * Deletes every item of the data namespace `ns`, the visit partitions of `visitors` included. Safe to repeat.
   * @returns items deleted
   */
  deleteNamespace(
    ns: string,
    visitors: AsyncIterable<readonly string[]>,
    onProgress?: (deleted: number) => void | Promise<void>,
  ): Promise<number>;
}

/**
 * The recomputes many payment syncs of one site leave to one pass (`DerivedPaymentSync.syncDerived` and
 * `PayerCohorts.syncPayment` with a batch, then `finishSync`): a handle the list layout makes
 * (`PaymentListLayout.batch`) and the stores fill and empty; the service only passes it along.
 */
export interface RecomputeBatch {
  /** The site the batch's syncs are for, null while it holds none. */
  readonly site: string | null;
  /** Empties the batch once its recomputes ran, so it can be used again. */
  clear(): void;
}

/**
 * Where the payment list places a payment (`docs/data-model.md`, "Payments"): the positions a
 * payment's contribution occupies, named as a payment keeps those it left (`Payment.unlisted`).
 */
export interface PaymentListLayout {
  /** The list positions of a contribution in the data namespace `site`: its main item and, when refunded, its copy. */
  positions(site: string, c: Contribution): string[];
  /** An empty recompute batch for `DerivedPaymentSync` and `PayerCohorts`. */
  batch(): RecomputeBatch;
}

/** A payment's key in its namespace: provider and the provider's id. */
export interface PaymentRef {
  provider: Provider;
  id: string;
}

/*
 * The payment use cases (`lambdas/services/payments.ts`, `payment-import.ts`) take one port per item
 * family of the payments (`docs/data-model.md`, "Payments"; `docs/payments.md`). `site` is a data
 * namespace (`namespaceOf`). Writes several deliveries may race on are conditioned on the revision read.
 */

/** Payments and their aliases (PAYMENT, PAYMENT_ALIAS): a payment stored once under its canonical id. */
export interface PaymentRecordStore {
  /** Canonical ids of the payments any of `ids` names (itself or an alias), sorted. */
  findPaymentIds(site: string, provider: Provider, ids: readonly string[]): Promise<string[]>;
  /** Points `ids` (aliases of a payment folded into another) at `paymentId`. */
  repointAliases(site: string, provider: Provider, paymentId: string, ids: readonly string[]): Promise<void>;
  deletePayment(site: string, provider: Provider, id: string): Promise<void>;
  /**
   * Makes each of `ids` an alias of `paymentId`, and `paymentId` its own unless `own` is false (an import: its
   * PAYMENT item stands for it, `aliasTargets`).
   */
  linkAliases(
    site: string,
    provider: Provider,
    paymentId: string,
    ids: readonly string[],
    own?: boolean,
  ): Promise<void>;
  getPayment(site: string, provider: Provider, id: string): Promise<Payment | null>;
  getPayments(keys: ReadonlyArray<{ site: string; provider: Provider; id: string }>): Promise<Payment[]>;
  /** Writes `payment` if the stored one is still at `expectedRev` (0: none stored); false when it is not. */
  putPayment(payment: Payment, expectedRev: number): Promise<boolean>;
  listPayments(site: string): Promise<Payment[]>;
  /** A site's payments a Query page at a time (`limit` items, else 1 MB). */
  paymentPages(site: string, limit?: number): AsyncGenerator<Payment[]>;
}

/**
 * The payments as the payments table's writer reads them (`docs/data-model.md`, "Filtered reports",
 * *Payments*): a month at a time from the payment list, and whole for list items in the old form.
 */
export interface PaymentTableSource extends Pick<PaymentRecordStore, 'listPayments'> {
  /**
   * Each site-local month's PAYMENT_CHANGE counter (`YYYY-MM` → `n`; a month never recomputed is absent): one
   * paged Query of the site's change counters, read consistently. A change to a month's list is followed by a bump.
   */
  monthCounters(site: string): Promise<Map<string, number>>;
  /** The contributions listed in `month` (`YYYY-MM`), read consistently: one paged Query of its PAYMENT_LIST partition. */
  listedMonth(site: string, month: string): Promise<Contribution[]>;
}

/** Customers (CUSTOMER): the provider's customer, its subscriptions and its credit. */
export interface CustomerStore {
  getCustomer(site: string, provider: Provider, customerId: string): Promise<Customer | null>;
  /** Writes `customer` if the stored one is still at its `ver`; false when it is not. */
  putCustomer(customer: Customer): Promise<boolean>;
  listCustomers(site: string): Promise<Customer[]>;
}

/** The payments on visitors' timelines (VISITOR_PAYMENT copies in the visitor's partition). */
export interface PaymentTimelineStore {
  /** The payments on a visitor's timeline. */
  visitorPayments(site: string, visitorId: string): Promise<PaymentRef[]>;
}

/** Payments waiting for their visitor's visits (PAYMENT_PENDING), credited again by the scheduled function. */
export interface PendingCreditStore {
  /** Marks a payment pending its visitor's visits until `until` (ms). */
  markPending(site: string, payment: Payment, until: number): Promise<void>;
  clearPending(site: string, payment: Payment): Promise<void>;
  listPending(site: string): Promise<Array<PaymentRef & { until: number }>>;
}

/**
 * What a payment's change derives across families: its list items and period counters (PAYMENT_LIST,
 * PAYMENT_TOTALS, PAYMENT_CUSTOMERS, dimensions) and its visitor timeline copy.
 */
export interface DerivedPaymentSync {
  /**
   * Brings the payment's list items, counters and visitor timeline copy in line with it
   * (`previous`: its visitor and time before this change). With `batch`, the recomputes wait for `finishSync`.
   */
  syncDerived(
    payment: Payment,
    contribution: Contribution | null,
    previous: { visitor: string | null; ts: number | null } | null,
    batch?: RecomputeBatch,
  ): Promise<void>;
  /** Runs the recomputes a batch's syncs left, once each. */
  finishSync(batch: RecomputeBatch): Promise<void>;
}

/**
 * The payers behind retention (`docs/retention.md`): what the payment use cases keep in line
 * as payments and customers change. `site` is a data namespace; `now` ms since epoch.
 */
export interface PayerCohorts {
  /** Brings the payment's payer entry in line with it; with `batch`, the payer's recompute waits for the batch's end. */
  syncPayment(
    site: string,
    timezone: string,
    payment: Payment,
    rate: UsdRate,
    now: number,
    batch?: RecomputeBatch,
  ): Promise<void>;
  /** Removes a payment from a payer it no longer belongs to. */
  dropPayment(site: string, timezone: string, payer: string, paymentKey: string, now: number): Promise<void>;
  /** Recomputes a customer's payer after its subscription status changed. */
  syncCustomer(site: string, timezone: string, provider: string, customerId: string, now: number): Promise<void>;
  /** Every payment a payer ever held (its countable payments). */
  payerPaymentKeys(site: string, payer: string): Promise<Array<{ provider: Provider; id: string }>>;
}

/** A bulk load in chunks (`PaymentBulkLoads.bulkLoader`): `add` each chunk of payments, then `finish` once. */
export interface PaymentBulkLoad {
  add(payments: readonly Payment[]): Promise<void>;
  /** Deletes list positions (`PaymentListLayout.positions`) payments left (their `unlisted`); `finish` recomputes their days. */
  unlist(positions: readonly string[]): Promise<void>;
  /** Writes the markers and recomputes the days, months and cohorts; `onStep` is told as each of those begins. */
  finish(onStep?: (step: BulkLoadStep) => void): Promise<void>;
}

/** The steps of `PaymentBulkLoad.finish`: the visitors' markers with every day and month touched, then the payers' cohorts. */
export type BulkLoadStep = 'days' | 'cohorts';

/** How `bulkLoader` treats what the table held before it. */
export interface BulkLoadOptions {
  /** false to leave the PAYMENT items as they are (they are the source); default true */
  writePayments?: boolean;
  /** ms since epoch, the clock the reports will read with ("paying until" days before its local day are dropped); omitted, none is */
  now?: number;
  /**
   * true: each visitor's payments marker is only raised (a conditional
   * UpdateItem per visitor), for visitors with payments outside the load (an
   * import into a site with payments); default false: set with
   * BatchWriteItem to the latest loaded payment (the load holds every payment
   * of its visitors)
   */
  raiseMarkers?: boolean;
}

/** The derived items of many payments written at once (an import, a rebuild, the report benchmark). */
export interface PaymentBulkLoads {
  /** A bulk load of a site's payments in chunks (`rate`: the USD rates in force). */
  bulkLoader(site: string, timezone: string, rate: UsdRate, options?: BulkLoadOptions): PaymentBulkLoad;
}

/** The bulk writes of a payment import (`lambdas/services/payment-import.ts`) on the payments and aliases. */
export interface PaymentRecordBulk extends PaymentRecordStore {
  /** The canonical payment id each of `ids` is an alias of, keyed by `aliasRef`; ids not known are absent. */
  aliasTargets(site: string, ids: readonly PaymentRef[]): Promise<Map<string, string>>;
  /** Writes payments not stored before, and an alias for each of their ids, unconditionally. */
  bulkPutPayments(payments: readonly Payment[]): Promise<void>;
  /** Forgets a payment's `unlisted` positions once their days are recomputed, if it is still at its `rev`. */
  clearUnlisted(payment: Payment): Promise<void>;
}

/** The bulk writes of a payment import on the customers. */
export interface CustomerBulk extends CustomerStore {
  bulkLoadCustomers(customers: readonly Customer[]): Promise<void>;
}

/** The bulk writes of a payment import on the visitors' timelines. */
export interface PaymentTimelineBulk extends PaymentTimelineStore {
  /** Deletes the visitor timeline copies of payments as they were (they moved visitor or time). */
  bulkDropTimelineCopies(previous: readonly Payment[]): Promise<void>;
}

/** The bulk writes of a payment import on the pending credits. */
export interface PendingCreditBulk extends PendingCreditStore {
  /** Marks payments pending (`markPending`) and clears others. */
  bulkPending(
    site: string,
    mark: ReadonlyArray<{ payment: Payment; until: number }>,
    clear: readonly Payment[],
  ): Promise<void>;
}

/** Visit figures of a filtered range (`docs/api.md`, "Filters"): the sums the top stats are made of, visitors exact. */
export interface FilteredVisitTotals {
  visitors: number;
  sessions: number;
  pageviews: number;
  bounces: number;
  timed_visits: number;
  /** Summed over timed visits, ms. */
  duration_ms: number;
}

/** Counted payments of a filtered range (not failed, credited to a matching visit); cents are USD cents net of refunds. */
export interface FilteredPaymentTotals {
  payments: number;
  cents: number;
  customers: number;
  /** Those whose credited visit started in the range (`docs/api.md` "Overview"). */
  matched_payments: number;
  matched_cents: number;
  /** Distinct payers of the matched payments. */
  converted: number;
}

/** One value of a filtered breakdown: matching visits with it, and the payments credited to them. */
export interface FilteredValue {
  visits: number;
  payments: number;
  cents: number;
  customers: number;
}

/**
 * How a filtered figure counts distinct visitors (`docs/api.md`, "Filters"): `exact`, the distinct visitor
 * keys, where the unfiltered report's visitor set is exact; `registers`, the HyperLogLog estimate of the
 * unfiltered sketch's own registers built from the matching visits' keys (`docs/data-model.md`, "Filtered
 * reports"), where it is registers. The service decides (`unfilteredRegisters`), the engine counts.
 */
export type VisitorCounting = 'exact' | 'registers';

/** A site-local day range, `YYYY-MM-DD` both ends included. */
export interface FilteredRange {
  from: string;
  to: string;
}

/**
 * Filtered reads of the visit and payments tables (`docs/data-model.md`,
 * "Filtered reports"): the visits of a site-local day range that match a
 * filter, and the range's payments credited to matching visits. Locally
 * DuckDB over the local Parquet; in AWS the same SQL in the report Lambda
 * over the table's files copied from S3 (`S3FilteredVisits`).
 */
export interface FilteredVisits {
  /** The matching visits' totals, visitors counted by `visitors` (default exact). @throws Error with the engine's message */
  totals(site: string, filter: Filter, range: FilteredRange, visitors?: VisitorCounting): Promise<FilteredVisitTotals>;
  /** The range's payments credited to matching visits. @throws Error with the engine's message */
  payments(site: string, filter: Filter, range: FilteredRange): Promise<FilteredPaymentTotals>;
  /**
   * Per value of a breakdown dimension (`NONE` for none; `page`: each distinct page of a visit): the matching
   * visits, and the payments credited to a matching visit with that value.
   * @throws Error with the engine's message
   */
  breakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    dimension: Dimension,
  ): Promise<Map<string, FilteredValue>>;
  /**
   * The range's matching visits, as rows, and the range's counted payments credited to a matching visit,
   * each with its visit's row (what the hourly time series reads).
   * @throws Error with the engine's message
   */
  input(site: string, filter: Filter, range: FilteredRange): Promise<FilteredInput>;
  /**
   * Per value of a custom property (`NONE` for a visit none of whose events had it; a visit with several
   * values under each): the matching visits, and the payments credited to a matching visit with that value.
   * @throws Error with the engine's message
   */
  propBreakdown(site: string, filter: Filter, range: FilteredRange, key: string): Promise<Map<string, FilteredValue>>;
  /**
   * Per custom property key any event of a matching visit had (`docs/api.md`, "Properties"): those visits,
   * their distinct visitors, and the counted payments credited to them (each payment once per key).
   * @throws Error with the engine's message
   */
  propKeys(site: string, filter: Filter, range: FilteredRange): Promise<Map<string, PropKeyCounts>>;
  /**
   * The time series' sums per day or month (`FilteredSeries`), computed by the engine: what
   * `filteredTimeseries` computes from `input` for those intervals, without carrying the rows out. A point
   * (`YYYY-MM-DD` or `YYYY-MM`) in `registers` counts its visitors by registers, the others exactly.
   * @throws Error with the engine's message
   */
  series(
    site: string,
    filter: Filter,
    range: FilteredRange,
    interval: SummedInterval,
    registers?: readonly string[],
  ): Promise<FilteredSeries>;
  /**
   * The goals report's sums per goal name (`FilteredGoalCounts`), computed by the engine; the report's
   * visitors counted by `visitors` (default exact), those of a goal in `registerGoals` by the goal sketches'
   * registers (`GOAL_VISITOR_LIMITS`), the others' exactly.
   * @throws Error with the engine's message
   */
  goals(
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors?: VisitorCounting,
    registerGoals?: readonly string[],
  ): Promise<FilteredGoalCounts>;
  /**
   * The goals report's sums per outbound link URL (`goal=Outbound Link: Click`, `docs/api.md` "Goals"): as
   * `goals`, keyed by the URL (`VisitRow.links`), those of a URL in `registerLinks` counted by registers.
   * @throws Error with the engine's message
   */
  links(
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors?: VisitorCounting,
    registerLinks?: readonly string[],
  ): Promise<FilteredGoalCounts>;
  /**
   * A page of the payments list (`docs/api.md`, "Filters"): the range's payments of a list class (failed ones
   * included, as in the unfiltered list) credited to a matching visit, newest first (ties by key descending),
   * `offset` skipped, at most `limit` keys (`provider:id`), and `total`, how many there are.
   * @throws Error with the engine's message
   */
  paymentList(
    site: string,
    filter: Filter,
    range: FilteredRange,
    cls: ListClass,
    offset: number,
    limit: number,
  ): Promise<{ total: number; keys: string[] }>;
  /**
   * The payers (`customerHash` keys) whose first counted payment of the range's days (earliest time, ties by
   * key) is credited to a matching visit: filtered retention's cohorts (`docs/api.md`, "Filters").
   * @throws Error with the engine's message
   */
  firstPayers(site: string, filter: Filter, range: FilteredRange): Promise<Set<string>>;
}

/** Every method of `FilteredVisits`, the list its wrappers forward (`forwardPort`): a method added to the port is added here. */
export const FILTERED_VISITS_METHODS = portMethods<FilteredVisits>()(
  'totals',
  'payments',
  'breakdown',
  'input',
  'propBreakdown',
  'propKeys',
  'series',
  'goals',
  'links',
  'paymentList',
  'firstPayers',
);

/**
 * The visit and payments tables as their writer (`lambdas/services/visit-table.ts`) keeps them:
 * closed site-local days in month files, the open days (after `writtenThrough`) in one file
 * rewritten whole at each run, and the payments by site-local month. Locally Parquet files
 * through DuckDB (`local/visit-table.ts`); in AWS the same files in the archive bucket (`S3VisitTable`).
 */
export interface VisitTableStore extends VisitTable {
  /** The site's visit rows of `month` (`YYYY-MM`) as written, decoded to text; none when never written. @throws Error when the file cannot be read */
  readMonth(site: string, month: string): Promise<VisitRow[]>;
  /** Replaces the site's open days (every day after `writtenThrough`) with `rows`. @throws Error when the table cannot be written */
  writeOpen(site: string, rows: readonly VisitRow[]): Promise<void>;
  /**
   * Replaces the site's payments of `month` (`YYYY-MM`, site-local) with `rows`, each stored with its credited
   * visit's row as the visit table holds it now (so write the visits first).
   * @throws Error when a row's day is not in `month`
   */
  writePayments(site: string, month: string, rows: readonly PaymentTableRow[]): Promise<void>;
  /**
   * The site's payment rows of `month` as last written (their own columns, without the credited visit's), none
   * when never written. @throws Error when the file cannot be read
   */
  readPayments(site: string, month: string): Promise<PaymentTableRow[]>;
  /** The months (`YYYY-MM`) holding a file of the site's visits, and of its payments. */
  months(site: string): Promise<{ visits: string[]; payments: string[] }>;
  /** The last site-local day whose visits are in the month files (closed days); null before the first run. */
  writtenThrough(site: string): Promise<string | null>;
  /** Records the last closed day written, after its month file is. */
  setWrittenThrough(site: string, day: string): Promise<void>;
  /**
   * Removes every file of the site (visits, open days, payments, dictionary) and its writer state, so the
   * next refresh writes it whole from the archive: after an erasure (the archive no longer holds the
   * person's events, and the dictionary may hold their values) and after a site's deletion.
   * @throws Error when a file cannot be removed
   */
  dropSite(site: string): Promise<void>;
  /** The payment list's month counters the payments months were last written from (`PaymentsWritten`), null before. */
  paymentsWritten(site: string): Promise<PaymentsWritten | null>;
  /** Records the counters the payments months were written from, after those months are. */
  setPaymentsWritten(site: string, state: PaymentsWritten): Promise<void>;
  /** When the writer last looked for changed archive days (ms since epoch), or null before its first look. */
  changesSeen(site: string): Promise<number | null>;
  /** Records when the writer looked for changed archive days (ms since epoch), after it rewrote them. */
  setChangesSeen(site: string, ms: number): Promise<void>;
}

/** Every method of `VisitTableStore`, the list its wrappers forward (`forwardPort`). */
export const VISIT_TABLE_STORE_METHODS = portMethods<VisitTableStore>()(
  'writeMonth',
  'readMonth',
  'writeOpen',
  'writePayments',
  'readPayments',
  'months',
  'writtenThrough',
  'setWrittenThrough',
  'dropSite',
  'changesSeen',
  'setChangesSeen',
  'paymentsWritten',
  'setPaymentsWritten',
);

/**
 * What the payments months were written from: the site's namespace (a rebuild's new generation starts
 * its counters again), each month's PAYMENT_CHANGE counter as read before its list was (0 for a month
 * written empty without a counter), and the open days' rows.
 */
export interface PaymentsWritten {
  namespace: string;
  counters: ReadonlyMap<string, number>;
  /** The open days' rows the months were written with (`digestOfRows`): rows that changed are written again. */
  openDigest: string;
  /** Set before closed days are written: the first of them, whose month and later ones are to be written again. */
  visitsFrom?: string;
  /**
   * What the open days' file was written from (`openSourceDigest`: the days, the site's rules and the
   * archive objects listed): a run that lists the same skips them.
   */
  openSource?: string;
  /**
   * The form of the rows the site's table was written in (`TABLE_ROW_FORM`; absent: 1, before they kept link
   * URLs): a table of an older form is dropped and written again whole (`refreshSiteTable`).
   */
  rowForm?: number;
}

/** One rollup item as the reports use it (`docs/data-model.md`, "Rollups"): its sums, counters and visitor sets. */
export interface RollupRead {
  /** The item's site-local period: `YYYY-MM-DDTHH`, `YYYY-MM-DD` or `YYYY-MM`. */
  period: string;
  visits: number;
  pageviews: number;
  /** Named counters (bounces, durations in ms, …) by name. */
  counters: Record<string, number>;
  /** The period's distinct visitors. */
  sketch: VisitorSketch;
  /** Visits per value of the metric's dimension. */
  counts: Record<string, number>;
  /** Distinct visitors per value. */
  valueSketches: Record<string, VisitorSketch>;
}

/** One `visits` rollup bucket of a period as a time series reads it: its counts without its visitor set. */
export interface VisitCountsRead {
  /** The item's site-local period, as `RollupRead.period`. */
  period: string;
  visits: number;
  pageviews: number;
  counters: Record<string, number>;
  /** Distinct visitors of the period: exact while its set is exact (≤ 1,000 ids), else the HyperLogLog estimate. */
  visitors: number;
}

/** A period's payment counters as stored (`docs/data-model.md`, "Payments"). */
export interface StoredPeriod {
  granularity: Granularity;
  /** `YYYY-MM-DD` or `YYYY-MM`, site-local. */
  period: string;
  totals: PeriodTotals;
}

/** The imported days of a site (a Plausible export, `docs/ingestion.md`) as the reports read them; keyed by domain. */
export interface ImportedReads {
  /** The site's import, or null when it has none. */
  state(domain: string): Promise<ImportState | null>;
  /** A metric's imported periods over the spans (none for hourly spans: imports have days). */
  periods(domain: string, metric: ImportedMetric, spans: readonly PeriodSpan[]): Promise<ImportedPeriod[]>;
}

/**
 * The reads of the report use cases (`lambdas/services/reports.ts`; `docs/data-model.md`, "Reports"):
 * rollups by period spans, payment counters and list pages, a visitor's partition, payments by key,
 * realtime slices and retention's cohorts. `site` is a data namespace (`namespaceOf`); days and
 * periods are site-local. One instance per report: it may share reads between the report's calls.
 */
export interface ReportReads {
  readonly imported: ImportedReads;
  /** The first local day with a visit or a payment, or null (the start of range `all`). */
  firstDay(site: string): Promise<string | null>;
  /** A metric's rollups over the spans, each with its period. */
  rollups(site: string, metric: RollupMetric, spans: readonly PeriodSpan[]): Promise<RollupRead[]>;
  /** The `visits` rollups of the spans' periods; with their visitor sets only for spans with `sketches`. */
  visitRollups(
    site: string,
    spans: ReadonlyArray<PeriodSpan & { sketches: boolean }>,
  ): Promise<Array<VisitCountsRead & { sketch: VisitorSketch | null }>>;
  /** The payment counters of the spans' periods. */
  paymentTotals(site: string, spans: readonly PeriodSpan[]): Promise<StoredPeriod[]>;
  /** The distinct payers of the spans' periods. */
  paymentCustomers(site: string, spans: readonly PeriodSpan[]): Promise<PeriodCustomers[]>;
  /**
   * Payment keys (`provider:id`) of a class from local day `startDay` back to `fromDay`, newest
   * first, skipping `offset`, at most `limit`.
   */
  paymentPage(
    site: string,
    cls: ListClass,
    fromDay: string,
    startDay: string,
    offset: number,
    limit: number,
  ): Promise<string[]>;
  /** A payment dimension's counters per value over the spans' periods, one map per item read. */
  paymentDimension(
    site: string,
    dimension: PaymentDimension,
    spans: readonly PeriodSpan[],
  ): Promise<Array<Record<string, ValueCounters>>>;
  /** The realtime slices of a site from the minute of `sinceMs` (ms since epoch) on. */
  realtime(site: string, sinceMs: number): Promise<RealtimeSlice[]>;
  /** Everything in a visitor's partition: visits and the keys of their payments. */
  visitor(site: string, visitorId: string): Promise<{ visits: Visit[]; payments: PaymentRef[] }>;
  /** Retention's cohort counters of the range's spans and of the `churn_30d` window's, the first payer's day and the status sources. */
  retentionCohorts(
    site: string,
    range: readonly PeriodSpan[],
    window: readonly PeriodSpan[],
  ): Promise<RetentionCohorts>;
  /** The payments of `keys` that are stored (a key with none is left out). */
  payments(site: string, keys: readonly PaymentRef[]): Promise<Payment[]>;
  /**
   * The payers (`customerKey`) and summaries of the cohort members (`docs/retention.md`) whose first payment is on a
   * local day `from`..`to`: what filtered retention narrows to the payers a filter keeps.
   */
  cohortMembers(site: string, from: string, to: string): Promise<Array<{ payer: string; summary: PayerSummary }>>;
}

/**
 * Which partitions of the raw event archive changed (`docs/data-model.md`, "Filtered reports"): late
 * events (an import, a re-delivered batch) and an erasure's rewrite land in days the visit table has
 * already written, which its writer must then write again. Locally the files' modification times; in
 * AWS the objects' LastModified (ListObjectsV2 under the site's prefix).
 */
export interface ArchiveChanges {
  /**
   * The site's UTC partition days (`dt`, `YYYY-MM-DD`) holding a file written at or after `sinceMs`
   * (ms since epoch), sorted.
   * @throws Error when the archive cannot be listed
   */
  changedDays(site: string, sinceMs: number): Promise<string[]>;
}

/** An object of the archive as listed: its key under the archive's prefix (`site=<d>/dt=<YYYY-MM-DD>/<name>`), ETag and size. */
export interface ArchiveObject {
  key: string;
  etag: string;
  bytes: number;
}

/**
 * The archive's objects read one by one, without a query engine (`docs/data-model.md`, "Filtered
 * reports"): the visit table's writer reads the open days' few partitions so, instead of an Athena
 * query at every run. In AWS ListObjectsV2 and GetObject on the archive bucket
 * (`S3ArchiveObjects`); locally the archive's files (`LocalArchiveObjects`).
 */
export interface ArchiveObjects {
  /**
   * The site's objects in the UTC partition days `fromDt`..`toDt` (`YYYY-MM-DD`), sorted by key.
   * @throws Error when a day is not `YYYY-MM-DD`, the site not a domain name, or the listing fails
   */
  list(site: string, fromDt: string, toDt: string): Promise<ArchiveObject[]>;
  /**
   * An object's bytes and the ETag of the version read (a newer one than listed may be).
   * @throws Error when `key` is not an archive object's key, or the read fails
   */
  get(key: string): Promise<{ body: Uint8Array; etag: string }>;
}

/** The archive's objects of a span as listed once: what they hold is fixed by `digest`. */
export interface ArchiveSnapshot {
  /** A digest of the listed keys and ETags: two snapshots with the same digest hold the same events. */
  digest: string;
  /**
   * The listed objects' events, in `ArchiveReader.events`'s form and order (duplicates kept: the
   * sessionizer's rules keep each `event_id` once), reading only objects not already copied.
   * @throws Error when an object cannot be read
   */
  events(): Promise<AsyncIterable<TrackedEvent[]>>;
}

/** The archive's recent partitions read object by object (`ArchiveCopies`). */
export interface RecentArchive {
  /**
   * Lists the site's partitions `fromDt`..`toDt` (UTC days) once.
   * @throws Error when the listing fails
   */
  snapshot(site: string, fromDt: string, toDt: string): Promise<ArchiveSnapshot>;
}

/** Every method of `RecentArchive`, for wrappers (`lazyPort`). */
export const RECENT_ARCHIVE_METHODS = portMethods<RecentArchive>()('snapshot');

/**
 * Who looked at a site's reports, so that the visit table of filtered reports is refreshed while someone does
 * (`docs/data-model.md`, "Filtered reports", *On demand*): one LOOK item per site, times in ms since epoch.
 */
export interface SiteLook {
  /** The last look recorded (a report, MCP or filtered request of the site). */
  looked: number;
  /** When a look found the site idle and asked for a refresh, or null. */
  wanted: number | null;
  /** When the last refresh asked for (`wanted`) started, or null. */
  refreshed: number | null;
}

/** The report and MCP functions' side of the looks (`DynamoLookStore`). */
export interface LookMarks {
  /**
   * Records a look at `now`. @returns true when the site was looked at after `activeSince` (ms), false when it
   * was idle (no look since, or none at all): the look then also records `wanted` = `now`.
   */
  look(site: string, now: number, activeSince: number): Promise<boolean>;
  /** The site's look as stored now (a strongly consistent read), or null. */
  get(site: string): Promise<SiteLook | null>;
}

/** The operations function's side of the looks (`DynamoLookStore`). */
export interface LookLedger extends Pick<LookMarks, 'get'> {
  /** Every site's look, by domain (one paged Query). */
  list(): Promise<Map<string, SiteLook>>;
  /** Records that a refresh of the site that started at `ms` answers the looks wanted up to then. */
  setRefreshed(site: string, ms: number): Promise<void>;
}
