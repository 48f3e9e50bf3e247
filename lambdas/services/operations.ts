import { advanceErasures, type ErasureDriverDeps } from './erasure-requests.js';
import { advanceSiteDeletions, type SiteDeletionDriverDeps } from './site-deletion.js';
import { refreshSiteTable, type VisitTableDeps } from './visit-table.js';
import type { SiteConfig } from '../domain/site.js';
import type { Telemetry } from '../observability/telemetry.js';

/** The long jobs the app starts and the scheduled function finishes, a few minutes a run. */
export interface OperationsDeps {
  erasures: ErasureDriverDeps;
  deletions: SiteDeletionDriverDeps;
  /**
   * The visit table's writer (`refreshSiteTable`), run for every site once the deletions and
   * erasures are advanced. Absent where no adapter of the table exists (AWS: `docs/data-model.md`,
   * "Filtered reports").
   */
  visitTable?: VisitTableDeps & { sites: { listSites(): Promise<SiteConfig[]> }; logger: Telemetry['logger'] };
}

/** What one run advanced. */
export interface OperationsRun {
  /** Site deletions finished. */
  deletions: number;
  /** Erasures finished. */
  erasures: number;
  /** Site-local days written into the visit table's month files. */
  visitDays?: number;
}

/**
 * Advances the site deletions and erasures the app began, until `deadline`
 * (ms since epoch): deletions first (an erasure of a site being deleted is
 * dropped with it), each resumed from its checkpoint (`docs/deploy.md`,
 * "Deleting a site"; `docs/security.md`, "Erasing a person").
 */
export async function advanceOperations(deps: OperationsDeps, deadline: number): Promise<OperationsRun> {
  const deletions = await advanceSiteDeletions(deps.deletions, deadline);
  const erasures = await advanceErasures(deps.erasures, deadline);
  const table = deps.visitTable;
  if (!table) return { deletions: deletions.length, erasures: erasures.length };
  // A deleted site leaves nothing behind; an erased person's rows and dictionary values go with the
  // site's whole table, which the refresh below writes again from the archive the erasure rewrote.
  for (const domain of new Set([...deletions, ...erasures])) await table.table.dropSite(domain);
  let visitDays = 0;
  for (const site of await table.sites.listSites()) {
    // A site being rebuilt is left until the rebuild switches generations; the first run after writes it whole.
    if (site.building !== undefined) continue;
    try {
      visitDays += (await refreshSiteTable(table, site)).days;
    } catch (error) {
      table.logger.error('visit table write failed; the next run tries again', {
        site: site.domain,
        error: error as Error,
      });
    }
  }
  return { deletions: deletions.length, erasures: erasures.length, visitDays };
}
