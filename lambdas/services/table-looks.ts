import type { Logger } from '@aws-lambda-powertools/logger';
import { UnavailableError } from '../domain/errors.js';
import { forwardPort } from '../forward-port.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits, type LookMarks, type SiteLook } from '../ports.js';

/**
 * The visit table of filtered reports is refreshed on demand (`docs/data-model.md`, "Filtered reports", *On
 * demand*): at every scheduled run while someone looked at the site's reports within this long, ms; otherwise once
 * a day. A look after it finds the site idle and asks for a refresh at once.
 */
export const LOOK_ACTIVE_MS = 60 * 60_000;
/** A function instance records a look of a site at most this often, ms (a write per request would cost more than the reads). */
export const LOOK_WRITE_EVERY_MS = 5 * 60_000;
/**
 * How long a filtered request waits for the refresh a look asked for, ms: under the report function's 29 s
 * (`FILTERED_TIMEOUT_SECONDS`), with the filtered call's own seconds after it.
 */
export const REFRESH_WAIT_MS = 20_000;
/** How often a waiting filtered request reads the site's look again, ms. */
export const REFRESH_POLL_MS = 1_000;
/** The 503's message when the refresh did not end within `REFRESH_WAIT_MS`. */
export const REFRESHING_MESSAGE = 'filtered reports of this site are being brought up to date, retry in a minute';

/** Whether a refresh asked for by a look has not started since (`SiteLook.wanted` after `refreshed`). */
export const refreshPending = (look: SiteLook | null | undefined): boolean =>
  look?.wanted != null && (look.refreshed ?? -Infinity) < look.wanted;

export interface TableLooksDeps {
  marks: LookMarks;
  /** Asks the operations function to refresh the site's table now (an asynchronous invocation; it queues while a run holds the function). */
  refresh: (site: string) => Promise<void>;
  clock: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** `REFRESH_WAIT_MS` unless given. */
  waitMs?: number;
  /** Where a look that could not be recorded is reported (the request goes on). */
  logger: Pick<Logger, 'warn'>;
}

/**
 * The report and MCP functions' looks at a site (`docs/api.md`, "Filters", *Freshness*): every report request of
 * an authorized site is a look (`seen`), recorded at most once per `LOOK_WRITE_EVERY_MS` per site and instance; a look
 * that finds the site idle asks for a refresh. A filtered call first waits for a refresh that is asked for and not
 * begun (`fresh`), so it never answers from open days a day old.
 */
export class TableLooks {
  /** Per site: when this instance last recorded a look, and whether it has seen no refresh pending since. */
  private readonly marked = new Map<string, { at: number; fresh: boolean }>();

  constructor(private readonly deps: TableLooksDeps) {}

  /**
   * Records a look at `site` (a domain the caller may read), and asks for a refresh when the site was idle.
   * Never throws: a look that the store or Lambda refused is logged and tried again at the site's next request,
   * since the report itself (most often unfiltered) does not need it; only the table's freshness waits.
   */
  async seen(site: string): Promise<void> {
    const now = this.deps.clock();
    const last = this.marked.get(site);
    if (last && now - last.at < LOOK_WRITE_EVERY_MS) return;
    try {
      const active = await this.deps.marks.look(site, now, now - LOOK_ACTIVE_MS);
      this.marked.set(site, { at: now, fresh: false });
      if (!active) await this.deps.refresh(site);
    } catch (error) {
      this.marked.delete(site);
      this.deps.logger.warn('look at a site not recorded; its filtered table may lag until the next one', {
        site,
        error: error as Error,
      });
    }
  }

  /**
   * Resolves once no refresh of `site` is pending: at once when this instance saw none since its last look (no look
   * can find the site idle while that look is under `LOOK_ACTIVE_MS` old), else after reading the site's look every
   * `REFRESH_POLL_MS` until the refresh asked for is recorded done (`refreshed`, written when it ends).
   * @throws UnavailableError (503, `REFRESHING_MESSAGE`) when it is not done within `waitMs` of polls
   */
  async fresh(site: string): Promise<void> {
    const entry = this.marked.get(site);
    if (entry?.fresh && this.deps.clock() - entry.at < LOOK_WRITE_EVERY_MS) return;
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    // Counted in polls, not read off `clock`: the twin's tests may stop their clock.
    for (let polls = 0; refreshPending(await this.deps.marks.get(site)); polls++) {
      if (polls * REFRESH_POLL_MS >= (this.deps.waitMs ?? REFRESH_WAIT_MS))
        throw new UnavailableError(REFRESHING_MESSAGE);
      await sleep(REFRESH_POLL_MS);
    }
    if (entry) entry.fresh = true;
  }
}

/** `engine` with each call waiting first for a pending refresh of its site (`TableLooks.fresh`). */
export function freshFilteredVisits(engine: FilteredVisits, looks: Pick<TableLooks, 'fresh'>): FilteredVisits {
  return forwardPort(
    FILTERED_VISITS_METHODS,
    () => engine,
    async (_method, args, call) => {
      await looks.fresh(args[0]);
      return call();
    },
  );
}
