import { classifyChannel } from '../domain/channel.js';
import { addDays } from '../domain/range.js';
import { dataNamespace, type SiteConfig } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type {
  ArchiveReader,
  RebuildCheckpoint,
  RebuildStore,
  RollupStore,
  SiteGenerations,
  VisitStore,
} from '../ports.js';
import { sessionizeBatch } from './sessionize.js';
import { copyPayments, type PaymentDeps } from './payments.js';

/** The phases of a rebuild, in order, as the progress display names them (`docs/rebuild.md`). */
export const REBUILD_PHASES = [
  'cleaning up',
  'waiting for writers',
  'reading archive',
  'sessionizing',
  'crediting payments',
  'switching',
] as const;
export type RebuildPhase = (typeof REBUILD_PHASES)[number];

/** One progress report: the phase, what is done of it, and how much there is when known. */
export interface RebuildProgress {
  phase: RebuildPhase;
  /** Events (sessionizing), payments (crediting payments) or items deleted (cleaning up) so far. */
  done: number;
  /** The phase's total when known (payments), else null. */
  total: number | null;
  /** The fraction of the phase done, 0..1, when it can be told (sessionizing: by the events' time; crediting: by count), else null. */
  fraction: number | null;
}

export interface RebuildDeps {
  archive: ArchiveReader;
  sites: SiteGenerations;
  store: RebuildStore;
  visits: VisitStore;
  rollups: RollupStore;
  payments: PaymentDeps;
  /**
   * The fence (`docs/rebuild.md`): resolves once every writer sees the SITE
   * item as it is now and every event put on the stream before it is in the
   * archive. Locally: the site cache's TTL, then the stream drained into the
   * archive; in AWS: the cache TTL, a sessionizer run and the Firehose buffer.
   */
  fence: () => Promise<void>;
  /**
   * Resolves once no reader or writer can still use a generation the SITE
   * item no longer names (a report in flight, a sessionizer with the old
   * site cached): before a retired generation is deleted.
   */
  drain: () => Promise<void>;
  clock: () => number;
  onProgress?: (progress: RebuildProgress) => void | Promise<void>;
  /**
   * Asked after each checkpointed batch: true stops the rebuild there with a
   * `RebuildPausedError` (a function near its timeout); calling `rebuildSite`
   * again resumes from the checkpoint. Absent: never pauses.
   */
  pause?: () => boolean;
}

/** Thrown by `rebuildSite` when `deps.pause` asked it to stop after a checkpoint: the rebuild resumes from it. */
export class RebuildPausedError extends Error {}

export interface RebuildOutcome {
  site: string;
  /** The generation built and now live. */
  generation: number;
  /** The generation it replaced (0: the domain's own namespace), deleted after the switch. */
  replaced: number;
  /** True when this run resumed a rebuild that had stopped. */
  resumed: boolean;
  /** First and last archived day read (UTC partition days). */
  from: string | null;
  to: string;
  events: number;
  batches: number;
  payments: number;
  /** Items of retired generations deleted (this one's and any earlier one's left by a crash). */
  deleted: number;
}

/** Refused before anything changes: the site has data older than the archive (raw retention), which a rebuild would drop. */
export class ArchiveTooShortError extends Error {}

/** An archived event with its channel and source classified again by today's rules. */
export function reclassify(event: TrackedEvent): TrackedEvent {
  const { channel, source } = classifyChannel({
    referrerHost: event.referrer_host,
    utmSource: event.utm_source,
    utmMedium: event.utm_medium,
    utmCampaign: event.utm_campaign,
    clickIds: event.click_ids ? event.click_ids.split(',') : [],
  });
  return { ...event, channel, source };
}

/** Events per sessionizer batch of a rebuild: one checkpoint write per batch. */
export const REBUILD_BATCH = 1000;

/** True when `e` comes after `after` in the archive's order (ts, then event id). */
const isAfter = (e: TrackedEvent, after: RebuildCheckpoint['after']) =>
  after === null || e.ts > after.ts || (e.ts === after.ts && e.event_id > after.id);

async function report(
  deps: RebuildDeps,
  phase: RebuildPhase,
  done: number,
  total: number | null,
  fraction: number | null,
): Promise<void> {
  await deps.onProgress?.({ phase, done, total, fraction });
}

/**
 * Deletes the items of the site's retired generation (left by a switch or an
 * abandon), once nothing can use it (`deps.drain`), then forgets it. Visits
 * are found by visitor: every visitor of the archive, and every visitor a
 * payment of the generation names.
 * @returns items deleted (0 when nothing is retired)
 */
export async function cleanUpRetired(
  deps: RebuildDeps,
  site: SiteConfig,
): Promise<{ site: SiteConfig; deleted: number }> {
  if (site.retired === undefined) return { site, deleted: 0 };
  const retired = site.retired;
  await report(deps, 'cleaning up', 0, null, null);
  await deps.drain();
  const ns = dataNamespace(site.domain, retired);
  const first = await deps.archive.firstDay(site.domain);
  const paymentVisitors = await deps.store.paymentVisitors(ns);
  const today = new Date(deps.clock()).toISOString().slice(0, 10);
  const archived = first
    ? await deps.archive.visitors(site.domain, first, addDays(today, 1))
    : (async function* () {})();
  const visitors = (async function* () {
    yield paymentVisitors;
    yield* archived;
  })();
  const deleted = await deps.store.deleteNamespace(ns, visitors, (n) => report(deps, 'cleaning up', n, null, null));
  await deps.store.deleteCheckpoint(site.domain, retired);
  return { site: await deps.sites.clearRetired(site.domain, retired), deleted };
}

/**
 * Derives a site's data again, beside the live data (`footfall rebuild`,
 * `docs/rebuild.md`): readers see the live
 * generation's numbers until one conditional write makes the new generation
 * live, then the new numbers; never a mix.
 *
 * 1. A retired generation left by an earlier rebuild is deleted first.
 * 2. `building` := a new generation number (one conditional write; refused
 *    while another rebuild builds one). From then on every writer writes both
 *    generations (`writeTargets`). A rebuild that stopped is resumed instead:
 *    same generation, from its checkpoint.
 * 3. The fence: once every writer sees `building` and the archive holds every
 *    event put before, each event is either in the archive read next or
 *    written to both generations by the sessionizer (or both; visits dedupe
 *    by event id, so a duplicate changes nothing).
 * 4. The whole archive is sessionized into the new generation in time order
 *    with today's channel rules, as its own shard (`rebuild-<generation>`,
 *    batch n = sequence n), checkpointed after every batch.
 * 5. The live generation's payments are copied in and credited against the
 *    new visits (`copyPayments`).
 * 6. `generation` := the new one, `retired` := the old, `building` removed:
 *    one conditional write.
 * 7. The old generation is deleted once nothing can read it (step 1 again).
 *
 * Visits older than the archive (raw retention) would be lost: refused unless
 * `dropBeforeArchive` (`firstTrackedDay`: the live generation's first day with a visit).
 *
 * @throws ArchiveTooShortError before any write, when the archive starts after the site's first tracked day
 * @throws GenerationConflictError when another rebuild switched or abandoned the generation meanwhile
 * @throws Error with the archive engine's message when a query fails (the live generation is untouched)
 */
export async function rebuildSite(
  deps: RebuildDeps,
  domain: string,
  options: { firstTrackedDay: string | null; dropBeforeArchive?: boolean },
): Promise<RebuildOutcome> {
  let site = await mustGetSite(deps, domain);
  const first = await deps.archive.firstDay(domain);
  // Partitions are UTC days, tracked days local ones: a day's slack either way.
  if (
    options.firstTrackedDay !== null &&
    !options.dropBeforeArchive &&
    (first === null || addDays(first, -1) > options.firstTrackedDay)
  ) {
    throw new ArchiveTooShortError(
      `${domain}: the archive starts ${first ?? 'nowhere (it is empty)'} but the site has visits from ${options.firstTrackedDay}; a rebuild derives only what is archived and would drop the days before (pass --drop-before-archive to accept that)`,
    );
  }
  const earlier = await cleanUpRetired(deps, site);
  site = earlier.site;

  const resumed = site.building !== undefined;
  let generation = site.building;
  if (generation === undefined) {
    generation = await deps.store.nextGeneration(domain, site.generation ?? 0);
    site = await deps.sites.beginBuilding(domain, generation);
  }
  const replaced = site.generation ?? 0;
  const target: SiteConfig = { ...site, building: undefined, retired: undefined, generation };

  await report(deps, 'waiting for writers', 0, null, null);
  await deps.fence();

  await report(deps, 'reading archive', 0, null, null);
  const to = addDays(new Date(deps.clock()).toISOString().slice(0, 10), 1);
  const pages = first ? await deps.archive.events(domain, first, to) : (async function* () {})();
  let checkpoint: RebuildCheckpoint = (await deps.store.checkpoint(domain, generation)) ?? {
    generation,
    started: new Date(deps.clock()).toISOString(),
    batches: 0,
    events: 0,
    after: null,
  };
  const startMs = first ? Date.parse(`${first}T00:00:00Z`) : 0;
  const spanMs = Math.max(1, deps.clock() - startMs);
  await report(
    deps,
    'sessionizing',
    checkpoint.events,
    null,
    checkpoint.after ? Math.min(1, (checkpoint.after.ts - startMs) / spanMs) : 0,
  );

  const sessionize = { sites: { getSite: async () => target }, visits: deps.visits, rollups: deps.rollups };
  const shard = `rebuild-${generation}`;
  let batch: TrackedEvent[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    const sequence = String(checkpoint.batches + 1);
    await sessionizeBatch(
      sessionize,
      { shard, sequence },
      events.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) })),
    );
    const last = events[events.length - 1] as TrackedEvent;
    checkpoint = {
      ...checkpoint,
      batches: checkpoint.batches + 1,
      events: checkpoint.events + events.length,
      after: { ts: last.ts, id: last.event_id },
    };
    await deps.store.saveCheckpoint(domain, checkpoint);
    await report(deps, 'sessionizing', checkpoint.events, null, Math.min(1, (last.ts - startMs) / spanMs));
    if (deps.pause?.()) throw new RebuildPausedError(`${domain}: rebuild paused after batch ${checkpoint.batches}`);
  };
  for await (const page of pages) {
    for (const event of page) {
      if (!isAfter(event, checkpoint.after)) continue;
      batch.push(reclassify(event));
      if (batch.length >= REBUILD_BATCH) await flush();
    }
  }
  await flush();
  await report(deps, 'sessionizing', checkpoint.events, null, 1);

  await report(deps, 'crediting payments', 0, null, 0);
  const live: SiteConfig = { ...site, building: undefined, retired: undefined };
  const payments = await copyPayments(deps.payments, live, target, (done, total) =>
    report(deps, 'crediting payments', done, total, done / total),
  );
  await report(deps, 'crediting payments', payments, payments, 1);

  await report(deps, 'switching', 0, null, null);
  site = await deps.sites.switchGeneration(domain, generation);
  const cleaned = await cleanUpRetired(deps, site);
  return {
    site: domain,
    generation,
    replaced,
    resumed,
    from: first,
    to,
    events: checkpoint.events,
    batches: checkpoint.batches,
    payments,
    deleted: earlier.deleted + cleaned.deleted,
  };
}

/**
 * Gives up the rebuild the site is building (`footfall rebuild --abandon`):
 * one conditional write stops every writer writing it, then its items are
 * deleted once no writer can still have the old SITE item cached. The live
 * generation is not touched.
 * @returns the generation abandoned and the items deleted
 * @throws GenerationConflictError when no rebuild is being built
 */
export async function abandonRebuild(
  deps: RebuildDeps,
  domain: string,
): Promise<{ site: string; abandoned: number; deleted: number }> {
  const site = await mustGetSite(deps, domain);
  if (site.building === undefined)
    throw new NoRebuildError(
      `${domain}: no rebuild is running (live generation ${site.generation ?? 0}); nothing to abandon`,
    );
  const abandoned = site.building;
  // A generation replaced earlier and not yet deleted goes first: `retired` holds one at a time.
  const earlier = await cleanUpRetired(deps, site);
  const cleaned = await cleanUpRetired(deps, await deps.sites.abandonBuilding(domain, abandoned));
  return { site: domain, abandoned, deleted: earlier.deleted + cleaned.deleted };
}

/** `--abandon` with no rebuild running. */
export class NoRebuildError extends Error {}

async function mustGetSite(deps: Pick<RebuildDeps, 'sites'>, domain: string): Promise<SiteConfig> {
  const site = await deps.sites.getSite(domain);
  if (!site) throw new Error(`site ${domain} does not exist`);
  return site;
}
