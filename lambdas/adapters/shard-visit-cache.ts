import { VISIT_GAP_MS, type Visit } from '../domain/visit.js';
import { domainOfNamespace, namespaceOf } from '../domain/site.js';
import type { RecentPaymentMarks, SiteDirectory, VisitReadOptions, VisitStore, VisitsAndPayments } from '../ports.js';
import type { BatchMarker } from './dynamo/batch-marker-store.js';

export interface ShardVisitCacheOptions {
  /** ms since epoch. Default `Date.now`. */
  clock?: () => number;
  /** Visitors kept, over every shard (least recently used go first). Default 20,000. */
  maxVisitors?: number;
  /** A visitor whose kept visits hold more events is not kept (memory). Default 500. */
  maxEventsPerVisitor?: number;
  /**
   * How long a kept payments marker is trusted (ms); the RECENT_PAYMENT_MARK
   * items read must cover it (`RECENT_MARK_TTL_MS`). Default 30 minutes.
   */
  maxAgeMs?: number;
  /**
   * How long after a shard's last batch ended its visits may be read
   * eventually consistently (ms). DynamoDB states no bound: eventually
   * consistent reads "may not reflect the results of a recently completed
   * write … If you repeat your read request after a short time, the response
   * should eventually return the more recent item" (Developer Guide, "DynamoDB
   * read consistency"). Default 30 s, half the default batching window, so
   * the stack's batches at every traffic level qualify.
   */
  settleMs?: number;
}

/** How far before a kept marker's time RECENT_PAYMENT_MARK items are read (ms): clocks of other hosts, and a raise recorded just before its marker is written. */
const MARK_MARGIN_MS = 60_000;

interface Entry {
  /** Every stored visit of the visitor that ends at or after `from` (ms) is in `visits`, and no other exists after them. */
  from: number;
  visits: Visit[];
  latestPayment: number | null;
  /** When `latestPayment` was last known to be current (ms). */
  asOf: number;
}

interface ShardState {
  /** The batch this container finished last on the shard (`batchKey`). */
  batch: string;
  /** When it finished (ms). */
  doneAt: number;
  /** Namespaces that were live in this container's batches of the shard since it took the shard over. */
  live: Set<string>;
}

const batchKey = (b: BatchMarker | null) => (b === null ? '' : `${b.first}-${b.last}`);
const maxOf = (a: number | null, b: number | undefined) => (b === undefined ? a : a === null ? b : Math.max(a, b));
const eventsOf = (visits: readonly Visit[]) => visits.reduce((n, v) => n + v.events.length, 0);

/**
 * Keeps, per shard, the visits a Lambda container of the sessionizer wrote,
 * so that the next batch of the same shard in the same container reads none
 * of them again (`docs/cost.md`, "Reads").
 *
 * Why it holds: a visitor's events are all on one shard (partition key site
 * and visitor, `stream-record.ts`), a shard's batches run one at a time, and
 * every batch puts the shard's BATCH_MARKER before it writes anything. So
 * when the marker a batch finds is the one this container put for the batch
 * it finished last, nothing else wrote the visits of the shard's visitors
 * since: what the container kept is what is stored. Then:
 * - a visitor whose kept visits cover the batch's read window (and who
 *   continues after them) is not read at all;
 * - the others are read eventually consistently (half the read units) once
 *   the shard's last batch ended `settleMs` ago: every write to their visits
 *   was made by an earlier batch of the shard;
 * - payments markers, which webhooks raise at any time, come from one
 *   strongly consistent Query of the namespace's RECENT_PAYMENT_MARK items
 *   per batch, so no marker is older than a read made `maxAgeMs` ago; a bulk
 *   rewrite of markers (`reset`) turns both shortcuts off while it is recent.
 * Only the live generation of a site that was live in an earlier batch of
 * the shard qualifies (a rebuild writes the generation it builds; its
 * visits were all written before it went live). A failed batch forgets the
 * shard; another container's batch, or none before, means strong reads.
 */
export class ShardVisitCache {
  private readonly entries = new Map<string, Entry>();
  private readonly shards = new Map<string, ShardState>();
  private readonly clock: () => number;
  private readonly maxVisitors: number;
  private readonly maxEvents: number;
  private readonly maxAgeMs: number;
  private readonly settleMs: number;

  constructor(
    private readonly marks: RecentPaymentMarks,
    options: ShardVisitCacheOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.maxVisitors = options.maxVisitors ?? 20_000;
    this.maxEvents = options.maxEventsPerVisitor ?? 500;
    this.maxAgeMs = options.maxAgeMs ?? 30 * 60_000;
    this.settleMs = options.settleMs ?? 30_000;
  }

  /** Visitors kept now (tests, the benchmark). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The visit store one batch of `shard` uses: `visits` itself, read
   * strongly, unless `found` (the marker the batch found before putting its
   * own) is the batch this container finished last on the shard. Call
   * `commit` once the batch succeeded, `abandon` when it failed.
   */
  batch(shard: string, found: BatchMarker | null, visits: VisitStore, sites: SiteDirectory): BatchVisits {
    const state = this.shards.get(shard);
    const continuous = state !== undefined && state.batch === batchKey(found) && found !== null;
    if (!continuous) this.forget(shard);
    const now = this.clock();
    return new BatchVisits(
      this,
      shard,
      visits,
      sites,
      continuous ? { live: state.live, settled: now - state.doneAt >= this.settleMs } : null,
    );
  }

  /** @internal the kept entry of a visitor, if still trusted at `now` */
  entry(shard: string, ns: string, visitor: string, now: number): Entry | undefined {
    const e = this.entries.get(`${shard}\n${ns}\n${visitor}`);
    return e !== undefined && now - e.asOf <= this.maxAgeMs ? e : undefined;
  }

  /** @internal the clock (ms) */
  now(): number {
    return this.clock();
  }

  /** @internal where RECENT_PAYMENT_MARK items must be read from at `now` (ms) to cover every kept marker */
  marksFrom(now: number): number {
    return now - this.maxAgeMs - MARK_MARGIN_MS;
  }

  /** @internal */
  recentMarks(ns: string, fromMs: number): Promise<{ latest: Map<string, number>; reset: boolean }> {
    return this.marks.since(ns, fromMs);
  }

  /** @internal records a finished batch: its visitors' visits as stored now */
  finish(
    shard: string,
    done: BatchMarker,
    live: ReadonlySet<string>,
    kept: ReadonlyArray<{ ns: string; visitor: string; entry: Entry | null }>,
  ): void {
    const state = this.shards.get(shard);
    this.shards.set(shard, {
      batch: batchKey(done),
      doneAt: this.clock(),
      live: new Set([...(state?.live ?? []), ...live]),
    });
    for (const { ns, visitor, entry } of kept) {
      const key = `${shard}\n${ns}\n${visitor}`;
      this.entries.delete(key);
      if (entry === null) continue;
      // Visits ending well before the newest one are no longer kept: a later batch that reaches back to them reads.
      const newest = entry.visits.reduce((m, v) => Math.max(m, v.end), Number.NEGATIVE_INFINITY);
      const from = Math.max(entry.from, newest - 2 * VISIT_GAP_MS);
      const visits = entry.visits.filter((v) => v.end >= from);
      if (eventsOf(visits) > this.maxEvents) continue;
      this.entries.set(key, { ...entry, from, visits });
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxVisitors) break;
      this.entries.delete(key);
    }
  }

  /** Forgets everything kept of `shard` (a failed batch, or another container ran one). */
  forget(shard: string): void {
    this.shards.delete(shard);
    const prefix = `${shard}\n`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

interface Read {
  ns: string;
  visitor: string;
  /** What is known after the read, or null when the visitor cannot be kept (a visit after the window was left out). */
  entry: Entry | null;
}

/** A `VisitStore` for one batch of one shard (`ShardVisitCache.batch`). */
export class BatchVisits implements VisitStore {
  private readonly reads: Read[] = [];
  private readonly put: Visit[] = [];
  private readonly removed: Visit[] = [];
  private readonly live = new Set<string>();
  private readonly liveChecks = new Map<string, Promise<boolean>>();
  private readonly marks = new Map<string, Promise<{ latest: Map<string, number>; reset: boolean; asOf: number }>>();
  /** Reads of this batch: answered from kept visits, eventually consistent, strongly consistent. */
  readonly counts = { kept: 0, eventual: 0, strong: 0 };

  constructor(
    private readonly cache: ShardVisitCache,
    private readonly shard: string,
    private readonly inner: VisitStore,
    private readonly sites: SiteDirectory,
    private readonly continuity: { live: ReadonlySet<string>; settled: boolean } | null,
  ) {}

  visitsAround(site: string, visitorId: string, fromMs: number, toMs: number): Promise<Visit[]> {
    return this.inner.visitsAround(site, visitorId, fromMs, toMs);
  }

  firstVisit(site: string, visitorId: string): Promise<Visit | null> {
    return this.inner.firstVisit(site, visitorId);
  }

  /**
   * `VisitStore.visitsAndPayments`, from what the container kept where it
   * may (`ShardVisitCache`); `options` is ignored (this store decides).
   */
  async visitsAndPayments(
    ns: string,
    visitor: string,
    fromMs: number,
    toMs: number,
    _options?: VisitReadOptions,
  ): Promise<VisitsAndPayments> {
    const live = await this.isLive(ns);
    if (live) this.live.add(ns);
    const fast = live && this.continuity !== null && this.continuity.live.has(ns);
    const recent = fast ? await this.recentMarks(ns) : null;
    if (recent === null || recent.reset) {
      const startedAt = this.cache.now();
      this.counts.strong++;
      const read = await this.inner.visitsAndPayments(ns, visitor, fromMs, toMs);
      this.reads.push({
        ns,
        visitor,
        entry:
          live && !read.later
            ? { from: fromMs, visits: read.visits, latestPayment: read.latestPayment, asOf: startedAt }
            : null,
      });
      return read;
    }
    const latest = recent.latest.get(visitor);
    const kept = this.cache.entry(this.shard, ns, visitor, recent.asOf);
    if (kept !== undefined && kept.from <= fromMs) {
      this.counts.kept++;
      const latestPayment = maxOf(kept.latestPayment, latest);
      this.reads.push({
        ns,
        visitor,
        entry: { from: kept.from, visits: kept.visits, latestPayment, asOf: recent.asOf },
      });
      return {
        visits: kept.visits.filter((v) => v.end >= fromMs && v.start <= toMs),
        latestPayment,
        later: kept.visits.some((v) => v.start > toMs),
      };
    }
    const settled = this.continuity?.settled === true;
    if (settled) this.counts.eventual++;
    else this.counts.strong++;
    const read = await this.inner.visitsAndPayments(ns, visitor, fromMs, toMs, { consistent: !settled });
    // An eventually consistent read may miss a marker raised a moment ago: the recent raises have it.
    const latestPayment = maxOf(read.latestPayment, latest);
    this.reads.push({
      ns,
      visitor,
      entry: read.later ? null : { from: fromMs, visits: read.visits, latestPayment, asOf: recent.asOf },
    });
    return { ...read, latestPayment };
  }

  async writeVisits(put: readonly Visit[], remove: readonly Visit[]): Promise<void> {
    await this.inner.writeVisits(put, remove);
    this.put.push(...put);
    this.removed.push(...remove);
  }

  /** The batch `done` (the marker it put) succeeded: keep its visitors' visits as now stored. */
  commit(done: BatchMarker): void {
    const put = new Map<string, Visit[]>();
    for (const v of this.put) {
      const key = `${v.site}\n${v.visitor_id}`;
      const list = put.get(key);
      if (list) list.push(v);
      else put.set(key, [v]);
    }
    const removed = new Set(this.removed);
    const kept = this.reads.map(({ ns, visitor, entry }) => {
      if (entry === null) return { ns, visitor, entry };
      const written = put.get(`${ns}\n${visitor}`) ?? [];
      const ids = new Set(written.map((v) => v.id));
      const visits = [...entry.visits.filter((v) => !removed.has(v) && !ids.has(v.id)), ...written].sort(
        (a, b) => a.start - b.start,
      );
      return { ns, visitor, entry: { ...entry, visits } };
    });
    this.cache.finish(this.shard, done, this.live, kept);
  }

  /** The batch failed: what the shard's visits are is no longer known. */
  abandon(): void {
    this.cache.forget(this.shard);
  }

  private isLive(ns: string): Promise<boolean> {
    let check = this.liveChecks.get(ns);
    if (check === undefined) {
      check = this.sites.getSite(domainOfNamespace(ns)).then((site) => site !== null && namespaceOf(site) === ns);
      this.liveChecks.set(ns, check);
    }
    return check;
  }

  private recentMarks(ns: string): Promise<{ latest: Map<string, number>; reset: boolean; asOf: number }> {
    let marks = this.marks.get(ns);
    if (marks === undefined) {
      const asOf = this.cache.now();
      marks = this.cache.recentMarks(ns, this.cache.marksFrom(asOf)).then((found) => ({ ...found, asOf }));
      this.marks.set(ns, marks);
    }
    return marks;
  }
}
