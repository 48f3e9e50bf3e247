import { advanceErasures, type ErasureDriverDeps } from './erasure-requests.js';
import { advanceSiteDeletions, type SiteDeletionDriverDeps } from './site-deletion.js';
import { lastClosedDay, refreshSiteTable, type VisitTableDeps } from './visit-table.js';
import { LOOK_ACTIVE_MS, refreshPending } from './table-looks.js';
import type { SiteConfig } from '../domain/site.js';
import type { LookLedger, SiteLook } from '../ports.js';
import type { Telemetry } from '../observability/telemetry.js';

/** The operations function's schedule (lib/functions.ts `everyMinutes`), ms. */
export const OPERATIONS_EVERY_MS = 15 * 60_000;

/**
 * The visit table refreshed on demand (`docs/data-model.md`, "Filtered reports", *On demand*): a scheduled run
 * refreshes a site only while someone looks at its reports (`LOOK_ACTIVE_MS`), when a look asked for it, or once a
 * day, at the first run after a site-local day closed (`lastClosedDay`).
 */
export interface OnDemand {
  looks: LookLedger;
  /** The time between scheduled runs, ms (`OPERATIONS_EVERY_MS`). */
  runEveryMs: number;
}

/** The visit table's writer and what it runs for. */
export type OperationsVisitTable = VisitTableDeps & {
  sites: { listSites(): Promise<SiteConfig[]>; getSite(domain: string): Promise<SiteConfig | null> };
  logger: Telemetry['logger'];
  /** Without it every site is refreshed at every run (the local twin: `docs/data-model.md`, "Filtered reports"). */
  onDemand?: OnDemand;
};

/** The long jobs the app starts and the scheduled function finishes, a few minutes a run. */
export interface OperationsDeps {
  erasures: ErasureDriverDeps;
  deletions: SiteDeletionDriverDeps;
  /**
   * The visit table's writer (`refreshSiteTable`), run for the sites due once the deletions and
   * erasures are advanced. Absent where no adapter of the table exists (AWS: `docs/data-model.md`,
   * "Filtered reports").
   */
  visitTable?: OperationsVisitTable;
}

/** What one run advanced. */
export interface OperationsRun {
  /** Site deletions finished. */
  deletions: number;
  /** Erasures finished. */
  erasures: number;
  /** Site-local days written into the visit table's month files. */
  visitDays?: number;
  /** Sites whose visit table was refreshed. */
  refreshed?: number;
}

/**
 * Whether a scheduled run at `now` (ms) refreshes `site`'s table: someone looked within `LOOK_ACTIVE_MS`, a look
 * asked for a refresh not done since, or a site-local day closed since the previous run (the daily run, which
 * writes the closed day and looks for changed days).
 */
export function refreshDue(site: SiteConfig, look: SiteLook | undefined, now: number, runEveryMs: number): boolean {
  if (look && (now - look.looked < LOOK_ACTIVE_MS || refreshPending(look))) return true;
  return lastClosedDay(now, site.timezone) !== lastClosedDay(now - runEveryMs, site.timezone);
}

/** Refreshes one site's table, logging a failure (the next run tries again); records the refresh a look asked for. */
async function refreshOne(table: OperationsVisitTable, site: SiteConfig, look: SiteLook | undefined): Promise<number> {
  const started = table.clock();
  try {
    const { days } = await refreshSiteTable(table, site);
    if (refreshPending(look)) await table.onDemand?.looks.setRefreshed(site.domain, started);
    return days;
  } catch (error) {
    table.logger.error('visit table write failed; the next run tries again', {
      site: site.domain,
      error: error as Error,
    });
    return 0;
  }
}

/**
 * The visit table's part of a scheduled run: the sites due (`refreshDue`; every site without `onDemand`, and the
 * sites whose table `dropped` names), those a look waits for first; then, as a look may have asked for a refresh
 * while the run went on, the sites asked for since.
 * @param dropped the sites whose table this run dropped (a deletion, an erasure): written again whatever their looks
 * @returns the site-local days written into month files, and the sites refreshed
 */
export async function refreshVisitTables(
  table: OperationsVisitTable,
  dropped: ReadonlySet<string>,
): Promise<{ visitDays: number; refreshed: number }> {
  const now = table.clock();
  const { onDemand } = table;
  const looks = onDemand ? await onDemand.looks.list() : new Map<string, SiteLook>();
  // A site being rebuilt is left until the rebuild switches generations; the first run after writes it whole.
  const sites = (await table.sites.listSites()).filter((s) => s.building === undefined);
  const due = sites
    .filter((s) => !onDemand || dropped.has(s.domain) || refreshDue(s, looks.get(s.domain), now, onDemand.runEveryMs))
    .sort((a, b) => Number(refreshPending(looks.get(b.domain))) - Number(refreshPending(looks.get(a.domain))));
  let visitDays = 0;
  for (const site of due) visitDays += await refreshOne(table, site, looks.get(site.domain));
  let refreshed = due.length;
  if (onDemand) {
    const done = new Set(due.map((s) => s.domain));
    const since = await onDemand.looks.list();
    for (const site of sites.filter((s) => !done.has(s.domain) && refreshPending(since.get(s.domain)))) {
      visitDays += await refreshOne(table, site, since.get(site.domain));
      refreshed++;
    }
  }
  return { visitDays, refreshed };
}

/**
 * Advances the site deletions and erasures the app began, until `deadline`
 * (ms since epoch): deletions first (an erasure of a site being deleted is
 * dropped with it), each resumed from its checkpoint (`docs/deploy.md`,
 * "Deleting a site"; `docs/security.md`, "Erasing a person"); then refreshes the
 * visit tables due (`refreshDue`).
 */
export async function advanceOperations(deps: OperationsDeps, deadline: number): Promise<OperationsRun> {
  const deletions = await advanceSiteDeletions(deps.deletions, deadline);
  const erasures = await advanceErasures(deps.erasures, deadline);
  const table = deps.visitTable;
  if (!table) return { deletions: deletions.length, erasures: erasures.length };
  // A deleted site leaves nothing behind; an erased person's rows and dictionary values go with the
  // site's whole table, which the refresh below writes again from the archive the erasure rewrote.
  const dropped = new Set([...deletions, ...erasures]);
  for (const domain of dropped) await table.table.dropSite(domain);
  return { deletions: deletions.length, erasures: erasures.length, ...(await refreshVisitTables(table, dropped)) };
}

/**
 * The refresh a look asked for (`TableLooks.seen`: an asynchronous invocation of the operations function with
 * `{refresh: <domain>}`): the site's table alone, unless a run refreshed it since it was asked for. A site being
 * rebuilt, or gone, is answered as refreshed: its table stays as written until the rebuild ends.
 * @returns the site-local days written
 */
export async function refreshAskedFor(table: OperationsVisitTable, domain: string): Promise<OperationsRun> {
  const looks = table.onDemand?.looks;
  const look = looks ? await looks.get(domain) : null;
  if (looks && !refreshPending(look)) return { deletions: 0, erasures: 0, visitDays: 0, refreshed: 0 };
  const site = await table.sites.getSite(domain);
  if (!site || site.building !== undefined) {
    if (look?.wanted != null) await looks?.setRefreshed(domain, look.wanted);
    return { deletions: 0, erasures: 0, visitDays: 0, refreshed: 0 };
  }
  const visitDays = await refreshOne(table, site, look ?? undefined);
  return { deletions: 0, erasures: 0, visitDays, refreshed: 1 };
}
