import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import {
  breakdown,
  listPayments,
  overview,
  retention,
  timeseries,
  visitorTimeline,
  type ReportDeps,
} from '../../lambdas/services/reports.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import type { RangeQuery } from '../../lambdas/domain/range.js';

/**
 * What a reader sees of `site` (as configured: its `generation` picks the
 * namespace): overview, channel and page breakdowns, time series, payments,
 * retention and the timelines of `visitors`, through the report service the
 * API, MCP and the app share. Layout-independent, so it compares generations
 * whatever their items look like.
 */
export async function reportSnapshot(
  conn: DynamoConnection,
  site: SiteConfig,
  now: number,
  query: RangeQuery,
  visitors: readonly string[] = [],
) {
  const deps: ReportDeps = {
    sites: { getSite: async () => site, listSites: async () => [site] },
    store: new DynamoReportStore(conn),
    rates: async () => (currency) => ({ USD: 1, EUR: 1.1 })[currency] ?? null,
    clock: () => now,
  };
  const a = site.account;
  const d = site.domain;
  const timelines = [];
  for (const v of visitors) timelines.push(await visitorTimeline(deps, a, d, v).catch((e: Error) => e.message));
  return {
    overview: await overview(deps, a, d, query),
    channels: await breakdown(deps, a, d, 'channel', query, 100),
    pages: await breakdown(deps, a, d, 'page', query, 100),
    series: await timeseries(deps, a, d, query),
    payments: await listPayments(deps, a, d, query, 'all', 100, 0),
    retention: await retention(deps, a, d, query),
    timelines,
  };
}
