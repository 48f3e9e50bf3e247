import { trackedEventSchema, type TrackedEvent } from '../domain/tracked-event.js';
import { inParallel } from '../domain/parallel.js';
import { VISIT_GAP_MS, buildVisits, sameVisit, visitEventOf, type Visit } from '../domain/visit.js';
import { RollupDeltas } from '../domain/rollup.js';
import { namespaceOf, writeTargets, type SiteConfig } from '../domain/site.js';
import type { RollupStore, SiteDirectory, StreamCheckpoint, VisitStore } from '../ports.js';
import { realtimeSlices, type RealtimeSlice } from '../domain/realtime.js';
import { creditMayChange } from '../domain/payments/recredit.js';

export interface SessionizeDeps {
  sites: SiteDirectory;
  visits: VisitStore;
  rollups: RollupStore;
  /** Visitors read and written at once. */
  concurrency?: number;
  /**
   * Credits again the payments these visits can change (`recreditVisitors`,
   * each entry in the generation `namespace` names), after the visits are
   * written. Absent in `rebuild`, which credits the whole generation it
   * builds once at its end.
   */
  recredit?: (site: SiteConfig, visitors: readonly VisitorRecredit[]) => Promise<number>;
  /**
   * Where the realtime slices of the batch's recent events go (step 6,
   * `docs/api.md` "Realtime"), and the clock that says what is recent.
   * Absent in `rebuild`: history is never current.
   */
  realtime?: {
    store: { write(slices: readonly RealtimeSlice[], checkpoint: StreamCheckpoint): Promise<void> };
    clock: () => number;
  };
}

/** A stream record as the sessionizer needs it: its position and its data (the enriched event as JSON). */
export interface SessionizeRecord {
  sequenceNumber: string;
  data: Buffer;
}

export interface SessionizeOutcome {
  events: number;
  visitors: number;
  /** Records whose data was not an enriched event (logged and skipped, never retried forever). */
  malformed: number;
  /** Events of sites that no longer exist. */
  orphaned: number;
  visitsWritten: number;
  visitsRemoved: number;
  rollupItems: number;
  /** Payments credited again because visits of their visitor were written (step 5). */
  recredited: number;
  /** Site-minutes of recent events written for realtime (step 6). */
  realtimeItems: number;
}

/** The visits a visitor's new events change: the old ones they touch, and what replaces them. */
export interface VisitorChange {
  before: Visit[];
  after: Visit[];
  /**
   * Start (ms) of the earliest visit holding one of the events, changed or
   * not: every visit in `after` and `before` starts there or later (a visit
   * is only removed when merged into one that starts no later), and a retry
   * of the batch, which changes nothing, finds the same value.
   */
  since: number;
}

/** A visitor whose payments a batch's visits may credit differently (`paymentsToRecredit`), in one generation. */
export interface VisitorRecredit {
  visitor: string;
  /** The batch's `VisitorChange.since` for this visitor, ms. */
  since: number;
  /** The generation's namespace (`namespaceOf`). */
  namespace: string;
}

/**
 * Merges a visitor's new events into the stored visits they can touch.
 * Pure: `stored` are the visits around the events' time window.
 */
export function changeVisits(
  site: string,
  visitorId: string,
  stored: readonly Visit[],
  events: readonly TrackedEvent[],
): VisitorChange {
  const merged = buildVisits(site, visitorId, [
    ...stored.flatMap((v) => v.events.map((e, i) => (i === 0 ? { ...e, attrs: v.attrs } : e))),
    ...events.map(visitEventOf),
  ]);
  // Stored visits that come out the same are not changes.
  const unchanged = merged.filter((v) => stored.some((s) => sameVisit(s, v)));
  // Visits do not overlap: the earliest event's visit is the one starting last at or before it.
  let earliest = Number.POSITIVE_INFINITY;
  for (const e of events) if (e.ts < earliest) earliest = e.ts;
  let since = Number.NEGATIVE_INFINITY;
  for (const v of merged) if (v.start <= earliest && v.start > since) since = v.start;
  if (since === Number.NEGATIVE_INFINITY) since = earliest;
  return {
    before: stored.filter((s) => !unchanged.some((u) => u.id === s.id)),
    after: merged.filter((v) => !unchanged.includes(v)),
    since,
  };
}

/**
 * Turns one batch of the event stream into visits and rollups
 * (`docs/data-model.md` "Exactly once without transactions"):
 *
 * 1. group the batch's events by site and visitor; each site's data is written
 *    in every generation of `writeTargets` (the live one, and the one a
 *    running rebuild builds), under its namespace (`namespaceOf`);
 * 2. read each visitor's stored visits around the events, merge, and compute
 *    the rollup deltas (contributions of the new visits minus the old);
 * 3. apply every rollup delta, each conditioned on the shard's checkpoint;
 * 4. only then write the visits, which are what step 2 reads;
 * 5. credit again the payments the batch's visits can change (`deps.recredit`),
 *    so a visit arriving after its payment changes the payment's credit: of
 *    the visitors whose payments marker (read with the visits in step 2)
 *    says they have a payment at or after the start of the batch's earliest
 *    visit of theirs (`creditMayChange` of the marker's latest payment), those
 *    payments (`paymentsToRecredit`);
 * 6. write the realtime slices of the batch's recent events (`deps.realtime`):
 *    one item per site-minute, keyed by the checkpoint, so a retry overwrites
 *    them with the same content (the clock decides what is recent, so a retry
 *    much later may write fewer).
 *
 * A crash anywhere and a retry of the same batch give the same end state:
 * before step 4 the retry computes the same deltas and the items already
 * updated skip them; during step 4 every delta is already applied and the
 * visits are recomputed identically (visit ids and contents are functions of
 * their events); during step 5 the retry credits the same payments again,
 * which is idempotent; who is credited again is computed from the batch's
 * resulting visits (`VisitorChange.since`), not from what changed, so the
 * retry selects the same payments and finishes what the crash interrupted.
 *
 * @throws on storage errors; the caller reports the whole batch as failed
 */
export async function sessionizeBatch(
  deps: SessionizeDeps,
  checkpoint: StreamCheckpoint,
  records: readonly SessionizeRecord[],
): Promise<SessionizeOutcome> {
  const outcome: SessionizeOutcome = {
    events: 0,
    visitors: 0,
    malformed: 0,
    orphaned: 0,
    visitsWritten: 0,
    visitsRemoved: 0,
    rollupItems: 0,
    recredited: 0,
    realtimeItems: 0,
  };
  const byVisitor = new Map<string, TrackedEvent[]>();
  for (const record of records) {
    let event: TrackedEvent;
    try {
      event = trackedEventSchema.parse(JSON.parse(record.data.toString('utf8')));
    } catch {
      outcome.malformed++;
      continue;
    }
    outcome.events++;
    const key = `${event.site}\n${event.visitor_id}`;
    const list = byVisitor.get(key);
    if (list) list.push(event);
    else byVisitor.set(key, [event]);
  }

  const sites = new Map<string, SiteConfig | null>();
  for (const events of byVisitor.values()) {
    const site = events[0]?.site ?? '';
    if (!sites.has(site)) sites.set(site, await deps.sites.getSite(site));
  }

  const deltas = new RollupDeltas();
  const changes: VisitorChange[] = [];
  const recredits: Array<{ domain: string; entry: VisitorRecredit }> = [];
  const recent: Array<{ site: string; events: readonly TrackedEvent[]; visits: readonly Visit[] }> = [];
  const groups = [...byVisitor.values()];
  // One unit of work per visitor and generation written (two while a rebuild builds one).
  const work = groups.flatMap((events) => {
    const site = sites.get((events[0] as TrackedEvent).site);
    if (!site) {
      outcome.orphaned += events.length;
      return [];
    }
    return writeTargets(site).map((target) => ({ target, events }));
  });
  await inParallel(work, deps.concurrency ?? 16, async ({ target, events }) => {
    const first = events[0] as TrackedEvent;
    const ns = namespaceOf(target);
    // A loop, not Math.min(...times): a spread of 120,000+ arguments overflows the stack (RangeError).
    let from = first.ts;
    let to = first.ts;
    for (const e of events) {
      if (e.ts < from) from = e.ts;
      if (e.ts > to) to = e.ts;
    }
    // The visitor's payments marker comes with the visits, in the same Query (step 5 needs it).
    const { visits: stored, latestPayment } = await deps.visits.visitsAndPayments(
      ns,
      first.visitor_id,
      from - VISIT_GAP_MS,
      to + VISIT_GAP_MS,
    );
    const change = changeVisits(ns, first.visitor_id, stored, events);
    if (deps.recredit && creditMayChange(latestPayment, change.since)) {
      recredits.push({ domain: first.site, entry: { visitor: first.visitor_id, since: change.since, namespace: ns } });
    }
    for (const v of change.before) deltas.addVisit(v, target.timezone, -1);
    for (const v of change.after) deltas.addVisit(v, target.timezone, 1);
    for (const e of events) deltas.addActivity(ns, e.visitor_id, e.ts, target.timezone);
    changes.push(change);
    // Realtime is read from the live generation only.
    const site = sites.get(first.site) as SiteConfig;
    if (deps.realtime && ns === namespaceOf(site)) recent.push({ site: ns, events, visits: change.after });
  });
  outcome.visitors = groups.length;

  const list = deltas.list();
  await deps.rollups.apply(list, checkpoint);
  outcome.rollupItems = list.length;

  const put = changes.flatMap((c) => c.after);
  const remove = changes.flatMap((c) => c.before);
  await deps.visits.writeVisits(put, remove);
  outcome.visitsWritten = put.length;
  outcome.visitsRemoved = remove.length;

  if (deps.recredit) {
    const bySite = new Map<string, VisitorRecredit[]>();
    for (const { domain, entry } of recredits) {
      const list = bySite.get(domain);
      if (list) list.push(entry);
      else bySite.set(domain, [entry]);
    }
    // In a fixed order (the visitors were read in parallel), so a retry settles in the same order.
    for (const [domain, visitors] of bySite) {
      visitors.sort((a, b) =>
        a.namespace === b.namespace
          ? a.visitor < b.visitor
            ? -1
            : a.visitor > b.visitor
              ? 1
              : 0
          : a.namespace < b.namespace
            ? -1
            : 1,
      );
      outcome.recredited += await deps.recredit(sites.get(domain) as SiteConfig, visitors);
    }
  }
  if (deps.realtime) {
    const slices = realtimeSlices(recent, deps.realtime.clock());
    await deps.realtime.store.write(slices, checkpoint);
    outcome.realtimeItems = slices.length;
  }
  return outcome;
}
