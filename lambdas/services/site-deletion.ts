import * as z from 'zod';
import { addDays } from '../domain/range.js';
import { dataNamespace, type SiteConfig } from '../domain/site.js';
import { NotFoundError } from '../domain/errors.js';
import type { ArchiveEraser, ArchiveReader, RebuildStore } from '../ports.js';
import type { Telemetry } from '../observability/telemetry.js';

/**
 * A site deletion in progress (item SITE_DELETION, `docs/data-model.md`): the
 * checkpoint `deleteSite` resumes from. It holds no visitor or payment data.
 */
export const siteDeletionSchema = z.object({
  domain: z.string(),
  /** Every generation the site ever had a namespace for (0..the highest begun), deleted in this order. */
  generations: z.array(z.number().int().min(0)),
  /** The generations whose items are all deleted. */
  done: z.array(z.number().int().min(0)),
  /** When the SITE item was removed, ms since epoch: the fence is counted from it. */
  begun: z.number(),
  /** Items deleted so far (configuration and data). */
  deleted: z.number().int().min(0),
  /** Archive files (S3 objects) deleted, null until the archive is done. */
  archive_files: z.number().int().min(0).nullable(),
});
export type SiteDeletion = z.infer<typeof siteDeletionSchema>;

/** Where a deletion's checkpoint and the site's configuration items are (`DynamoSiteDeletionStore`). */
export interface SiteDeletionStore {
  get(domain: string): Promise<SiteDeletion | null>;
  /** Every deletion not finished yet. */
  pending(): Promise<SiteDeletion[]>;
  /** Records a new deletion; false when one is recorded already. */
  begin(deletion: SiteDeletion): Promise<boolean>;
  save(deletion: SiteDeletion): Promise<void>;
  finish(domain: string): Promise<void>;
  /** The highest generation a rebuild ever began for the domain (0 when none). */
  lastGeneration(domain: string): Promise<number>;
  /** Deletes the SITE item, the provider connections and the webhook log; resolves with the items deleted. */
  removeSite(domain: string): Promise<number>;
  /** Deletes the rebuild state and checkpoints of the domain; resolves with the items deleted. */
  removeRebuildState(domain: string): Promise<number>;
}

/** The phases of a deletion, in order, as its progress names them (`docs/deploy.md`, "Deleting a site"). */
export const SITE_DELETION_PHASES = [
  'removing the site',
  'waiting for writers',
  'deleting items',
  'deleting the archive',
] as const;
export type SiteDeletionPhase = (typeof SITE_DELETION_PHASES)[number];

export interface SiteDeletionProgress {
  phase: SiteDeletionPhase;
  /** Items deleted so far (files, in the archive phase). */
  done: number;
  /** 'deleting items': the generation being deleted, and how many there are. */
  generation?: { index: number; of: number };
}

export interface SiteDeletionDeps {
  sites: { getSite(domain: string): Promise<SiteConfig | null> };
  store: SiteDeletionStore;
  /** The namespace deleter of rebuilds: every partition of a generation, its visits by visitor. */
  namespaces: Pick<RebuildStore, 'paymentVisitors' | 'deleteNamespace'>;
  archive: ArchiveReader;
  eraser: ArchiveEraser;
  /**
   * Resolves once no writer can still write the site and every event put on
   * the stream before `begunMs` (ms) is in the archive: AWS, the SITE cache's
   * TTL, a sessionizer run and Firehose's delivery delay counted from
   * `begunMs` (`AWS_FENCE_MS`); locally, the stream drained into the archive.
   */
  fence: (begunMs: number) => Promise<void>;
  clock: () => number;
  onProgress?: (progress: SiteDeletionProgress) => void | Promise<void>;
}

export interface SiteDeletionOutcome {
  site: string;
  generations: number;
  /** Items deleted: configuration, every generation's data, the rebuild state. */
  deleted: number;
  archive_files: number;
  resumed: boolean;
}

/**
 * The first step of deleting a site, all the app's action does
 * (`DELETE /api/app/sites/{domain}`): records the deletion, then deletes the
 * SITE item, the provider connections and the webhook log. From then on the
 * site answers 404 to every report, key and webhook, and the event endpoint
 * refuses its events once the SITE cache expires (30 s in AWS); its data is
 * deleted by `deleteSite` (`footfall sites delete`, which resumes from here).
 * Safe to repeat.
 * @throws NotFoundError when the site does not exist and no deletion of it is recorded
 */
export async function beginSiteDeletion(
  deps: Pick<SiteDeletionDeps, 'sites' | 'store' | 'clock'>,
  domain: string,
): Promise<{ deletion: SiteDeletion; resumed: boolean }> {
  const recorded = await deps.store.get(domain);
  if (recorded) {
    // A crash between the record and the SITE item's removal leaves the site: remove it again.
    await deps.store.removeSite(domain);
    return { deletion: recorded, resumed: true };
  }
  const site = await deps.sites.getSite(domain);
  if (!site) throw new NotFoundError(`site ${domain} does not exist`);
  // Every generation ever begun: the live one, one being built, one retired and abandoned ones alike.
  const highest = Math.max(
    site.generation ?? 0,
    site.building ?? 0,
    site.retired ?? 0,
    await deps.store.lastGeneration(domain),
  );
  const deletion: SiteDeletion = {
    domain,
    generations: Array.from({ length: highest + 1 }, (_, g) => g),
    done: [],
    begun: deps.clock(),
    deleted: 0,
    archive_files: null,
  };
  if (!(await deps.store.begin(deletion))) return beginSiteDeletion(deps, domain);
  deletion.deleted = await deps.store.removeSite(domain);
  await deps.store.save(deletion);
  return { deletion, resumed: false };
}

/**
 * Deletes a site and all its data (`footfall sites delete`; `docs/deploy.md`,
 * "Deleting a site"): its configuration (`beginSiteDeletion`), then, once no
 * writer can add to it (`deps.fence`), every generation's items
 * (`deleteNamespace`: every partition of the namespace, the visits of every
 * visitor of the archive and of every payment), the rebuild state, and last
 * the archive's partitions (last, because the visitors are read from it).
 * Checkpointed after each generation and step, so a second run after a crash
 * resumes where the first stopped; other sites' items are never read or
 * written (every key is built from this domain's namespaces).
 * @throws NotFoundError when the site does not exist and no deletion of it is recorded
 */
export async function deleteSite(deps: SiteDeletionDeps, domain: string): Promise<SiteDeletionOutcome> {
  await deps.onProgress?.({ phase: 'removing the site', done: 0 });
  const { deletion, resumed } = await beginSiteDeletion(deps, domain);
  await deps.onProgress?.({ phase: 'waiting for writers', done: deletion.deleted });
  await deps.fence(deletion.begun);
  const first = await deps.archive.firstDay(domain);
  const today = new Date(deps.clock()).toISOString().slice(0, 10);
  const todo = deletion.generations.filter((g) => !deletion.done.includes(g));
  for (const generation of todo) {
    const ns = dataNamespace(domain, generation);
    const progress = (n: number) =>
      deps.onProgress?.({
        phase: 'deleting items',
        done: deletion.deleted + n,
        generation: { index: deletion.done.length + 1, of: deletion.generations.length },
      });
    const paymentVisitors = await deps.namespaces.paymentVisitors(ns);
    const archived = first ? await deps.archive.visitors(domain, first, addDays(today, 1)) : null;
    const visitors = (async function* () {
      yield paymentVisitors;
      if (archived) yield* archived;
    })();
    deletion.deleted += await deps.namespaces.deleteNamespace(ns, visitors, progress);
    deletion.done.push(generation);
    await deps.store.save(deletion);
  }
  if (deletion.archive_files === null) {
    deletion.deleted += await deps.store.removeRebuildState(domain);
    await deps.onProgress?.({ phase: 'deleting the archive', done: 0 });
    deletion.archive_files = await deps.eraser.deleteSite(domain);
    await deps.store.save(deletion);
  }
  await deps.store.finish(domain);
  return {
    site: domain,
    generations: deletion.generations.length,
    deleted: deletion.deleted,
    archive_files: deletion.archive_files,
    resumed,
  };
}

export interface SiteDeletionDriverDeps extends Omit<SiteDeletionDeps, 'fence' | 'onProgress'> {
  /** How long after the SITE item's removal writers may still write the site and events reach the archive, ms (`AWS_FENCE_MS`). */
  fenceMs: number;
  /** Brings the archive up to date once the fence has passed (locally: drains the stream). */
  catchUp: () => Promise<void>;
  logger: Telemetry['logger'];
}

/**
 * Finishes the site deletions the app began (`deleteAppSite`), for the
 * scheduled function: each once its fence has passed (counted from the SITE
 * item's removal, so a run never sleeps through it), resumed from its
 * checkpoint (`deleteSite`). Stops starting new ones at `deadline` (ms); a
 * deletion that fails is logged and resumed at the next run.
 * @returns the deletions finished in this run
 */
export async function advanceSiteDeletions(deps: SiteDeletionDriverDeps, deadline: number): Promise<string[]> {
  const finished: string[] = [];
  for (const deletion of await deps.store.pending()) {
    if (deps.clock() >= deadline) break;
    if (deps.clock() < deletion.begun + deps.fenceMs) continue;
    try {
      await deleteSite({ ...deps, fence: deps.catchUp }, deletion.domain);
      finished.push(deletion.domain);
    } catch (error) {
      deps.logger.error('site deletion step failed; the next run resumes it', {
        site: deletion.domain,
        error: error as Error,
      });
    }
  }
  return finished;
}
