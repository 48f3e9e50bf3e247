import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SiteConfig } from '../domain/site.js';
import { recreditPending, type PaymentDeps } from '../services/payments.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface ScheduledDeps extends PaymentDeps, Telemetry {
  sites: { listSites(): Promise<SiteConfig[]> };
}

/**
 * The periodic work (EventBridge schedule; a timer locally): credits again
 * the payments that arrived before their visits were sessionized (webhooks are
 * faster than the stream). Visits need no closing pass: a visit is stored as
 * it grows, and its exit step is derived when read (`docs/data-model.md`).
 */
export function createScheduledHandler(deps: ScheduledDeps): () => Promise<{ sites: number; recredited: number }> {
  return async () => {
    let recredited = 0;
    const sites = await deps.sites.listSites();
    for (const site of sites) {
      try {
        recredited += await recreditPending(deps, site);
      } catch (error) {
        deps.logger.error('re-crediting failed; the next run tries again', { site: site.domain, error: error as Error });
      }
    }
    deps.metrics.addMetric('RecreditedPayments', MetricUnit.Count, recredited);
    deps.metrics.publishStoredMetrics();
    return { sites: sites.length, recredited };
  };
}
