import { cleanUpRetired, rebuildSite, RebuildPausedError, type RebuildDeps } from './rebuild.js';
import type { SiteConfig } from '../domain/site.js';

/** Where a rebuild driven in steps stands, saved between steps by its owner (an erasure request's item). */
export interface RebuildSteps {
  /** The generation this rebuild builds, once it began one; null before. */
  generation: number | null;
  /** When each wait began, ms since epoch, by label (`fence g<n>`, `drain g<n>`): a few entries per rebuild. */
  waits: Record<string, number>;
  /** How far the rebuild is, 0..1 (sessionizing then crediting payments). */
  fraction: number;
}

export interface RebuildStepDeps {
  /** The rebuild's stores and archive; its fence, drain and pause are the stepper's. */
  rebuild: Omit<RebuildDeps, 'fence' | 'drain' | 'pause' | 'onProgress'>;
  /** How long writers may still miss a new `building`, and events still reach the archive (`docs/rebuild.md`, the fence), ms. */
  fenceMs: number;
  /** How long readers may still use a generation the SITE item no longer names, ms. */
  drainMs: number;
  /** Brings the archive up to date once the fence has passed (locally: drains the stream; in AWS nothing). */
  catchUp: () => Promise<void>;
  /** The live generation's first day with a visit (`DynamoRebuildStore.firstVisitDay`), for `rebuildSite`'s refusal. */
  firstTrackedDay: (site: SiteConfig) => Promise<string | null>;
  /** Persists `state` (the wait that just began). */
  save: () => Promise<void>;
}

/** A wait of the fence or the drain that has not passed yet: the next step tries again. */
class StillWaiting extends Error {}

/**
 * Advances a site's rebuild (`rebuildSite`, `docs/rebuild.md`) as far as it
 * can before `deadline` (ms), for a function that runs a few minutes at a
 * time (the scheduled function): the fence and the drain are waits whose start
 * is saved in `state` and that end a step instead of sleeping; sessionizing
 * stops after the checkpoint past the deadline. Each call resumes where the
 * last stopped: the rebuild's own checkpoint, then its switch, then the
 * deletion of the replaced generation.
 * @returns done once the new generation is live and the old one deleted
 * @throws what `rebuildSite` throws (ArchiveTooShortError, GenerationConflictError, archive errors)
 */
export async function stepRebuild(
  deps: RebuildStepDeps,
  domain: string,
  state: RebuildSteps,
  deadline: number,
): Promise<{ done: boolean }> {
  const { clock, sites } = deps.rebuild;
  const siteNow = async () => {
    const site = await sites.getSite(domain);
    if (!site) throw new Error(`site ${domain} does not exist`);
    return site;
  };
  const waitFor = async (label: string, ms: number) => {
    if (state.waits[label] === undefined) {
      state.waits[label] = clock();
      await deps.save();
    }
    if (clock() < state.waits[label] + ms) throw new StillWaiting(label);
  };
  const rebuild: RebuildDeps = {
    ...deps.rebuild,
    fence: async () => {
      const site = await siteNow();
      // Called right after the rebuild began its generation: that one is ours.
      state.generation ??= site.building ?? null;
      await waitFor(`fence g${site.building ?? ''}`, deps.fenceMs);
      await deps.catchUp();
    },
    drain: async () => waitFor(`drain g${(await siteNow()).retired ?? ''}`, deps.drainMs),
    pause: () => clock() >= deadline,
    onProgress: (p) => {
      // A site without payments reports 0 of 0 (NaN): that phase is then done.
      const fraction = p.fraction === null ? null : Number.isFinite(p.fraction) ? p.fraction : 1;
      if (p.phase === 'sessionizing' && fraction !== null) state.fraction = 0.9 * fraction;
      if (p.phase === 'crediting payments' && fraction !== null) state.fraction = 0.9 + 0.1 * fraction;
    },
  };
  try {
    const site = await siteNow();
    if (state.generation !== null && site.generation === state.generation && site.building === undefined) {
      // Switched: what is left is the replaced generation's deletion.
      await cleanUpRetired(rebuild, site);
    } else {
      // Another rebuild (footfall rebuild) builds from the data as it was: wait for it to finish.
      if (state.generation === null && site.building !== undefined) return { done: false };
      await rebuildSite(rebuild, domain, { firstTrackedDay: await deps.firstTrackedDay(site) });
    }
    state.fraction = 1;
    return { done: true };
  } catch (error) {
    if (error instanceof StillWaiting || error instanceof RebuildPausedError) return { done: false };
    throw error;
  }
}
