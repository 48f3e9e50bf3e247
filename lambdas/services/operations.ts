import { advanceErasures, type ErasureDriverDeps } from './erasure-requests.js';
import { advanceSiteDeletions, type SiteDeletionDriverDeps } from './site-deletion.js';

/** The long jobs the app starts and the scheduled function finishes, a few minutes a run. */
export interface OperationsDeps {
  erasures: ErasureDriverDeps;
  deletions: SiteDeletionDriverDeps;
}

/** What one run advanced. */
export interface OperationsRun {
  /** Site deletions finished. */
  deletions: number;
  /** Erasures finished. */
  erasures: number;
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
  return { deletions: deletions.length, erasures };
}
