import { api } from './api.js';
import { startEarly } from './early.js';
import { apiFilters, filtersFromSearch } from './filters.js';
import { intervalFor, intervalFromQuery, rangeFromQuery } from './range.js';
import { rememberedFilteredReports } from './known-capabilities.js';

/**
 * The dashboard's totals and chart requests for a domain and query string:
 * the key each is asked again on (`useData`) and its load. The page and
 * `startDashboardEarly` both take them from here, so an early answer is the
 * one the page would have asked for. This module imports no component, so
 * that `start.ts` can run it before the rest of the app is evaluated.
 * @param filters the report API's `filters` (JSON), undefined when the address has none
 */
export function firstRequests(
  domain: string,
  query: Record<string, string | undefined>,
  filters: string | undefined,
  options?: { quiet401: boolean },
) {
  const range = { ...rangeFromQuery(query), filters };
  const key = `${domain}|${JSON.stringify(range)}`;
  // An interval asked in the address wins; else the range's default (the API's for `all`).
  const interval = intervalFromQuery(query) ?? intervalFor(range);
  return {
    range,
    interval,
    overview: { key, load: () => api.overview(domain, range, options) },
    series: { key: `${key}|${interval ?? ''}`, load: () => api.timeseries(domain, range, interval, options) },
  };
}

/**
 * When the app opens on a dashboard (`/sites/<domain>`), starts its chart
 * and totals requests at once, beside the session check (`early.ts`); a 401
 * is left to that check. The chart's series leaves first: locally one
 * process answers all three, in the order they arrive. An address with
 * filters starts nothing unless the deployment answered filters the last
 * time the app learned it (`known-capabilities.ts`): one without the engine
 * would answer them 400, and the page asks the unfiltered ones instead.
 * @param path the address's path, `search` its query string
 */
export function startDashboardEarly(path: string, search: string): void {
  const match = /^\/sites\/([^/]+)$/.exec(path);
  if (!match) return;
  const filters = apiFilters(filtersFromSearch(search).chips);
  if (filters !== undefined && !rememberedFilteredReports()) return;
  const requests = firstRequests(
    decodeURIComponent(match[1]!),
    Object.fromEntries(new URLSearchParams(search)),
    filters,
    { quiet401: true },
  );
  startEarly(requests.series.key, requests.series.load);
  startEarly(requests.overview.key, requests.overview.load);
}
