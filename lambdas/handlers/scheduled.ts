import { namespaceOf, writeTargets, type SiteConfig } from '../domain/site.js';
import { recreditPending, type PaymentDeps } from '../services/payments.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface ScheduledDeps extends PaymentDeps, Telemetry {
  sites: { listSites(): Promise<SiteConfig[]> };
  /** Folds a site namespace's pending rollup deltas into its rollups (`DynamoRollupStore.compact`). */
  rollups: { compact(site: string): Promise<{ parts: number; items: number }> };
  /** Sends a site's due email reports (`emailReportSender`); absent while no sender is configured. */
  emailReports?: (site: SiteConfig) => Promise<number>;
}

/**
 * The periodic work (EventBridge schedule every 5 minutes; a timer locally):
 * folds each site's pending rollup deltas into its rollups (every generation
 * being written: `writeTargets`), so each rollup item is rewritten once per
 * run instead of once per batch (`docs/data-model.md`, "Rollups: a delta log,
 * compacted"); and credits again the payments that arrived before their
 * visits were sessionized (webhooks are faster than the stream); and sends
 * the site's due email reports (`sendDueReports`). Visits need
 * no closing pass: a visit is stored as it grows, and its exit step is
 * derived when read. A site that fails is logged and tried again next run.
 */
export function createScheduledHandler(
  deps: ScheduledDeps,
): () => Promise<{ sites: number; recredited: number; compacted: number; mailed: number }> {
  return async () => {
    let recredited = 0;
    let compacted = 0;
    let mailed = 0;
    const sites = await deps.sites.listSites();
    for (const site of sites) {
      for (const target of writeTargets(site)) {
        try {
          compacted += (await deps.rollups.compact(namespaceOf(target))).parts;
        } catch (error) {
          deps.logger.error('rollup compaction failed; the next run tries again', {
            site: namespaceOf(target),
            error: error as Error,
          });
        }
      }
      try {
        recredited += await recreditPending(deps, site);
      } catch (error) {
        deps.logger.error('re-crediting failed; the next run tries again', {
          site: site.domain,
          error: error as Error,
        });
      }
      mailed += (await deps.emailReports?.(site)) ?? 0;
    }
    // One log line a run (8,640 a month), not two custom metrics ($0.60 a month): failures are logged as errors above.
    deps.logger.info('scheduled run', { sites: sites.length, recredited, compacted, mailed });
    return { sites: sites.length, recredited, compacted, mailed };
  };
}
