import { useLocation } from 'preact-iso';
import { ApiError } from './api.js';
import { apiFilters, filtersFromSearch, searchWithFilters, type FilterChip } from './filters.js';
import { useFilteredReports } from './capabilities.js';

/** The filters of the page's address and the ways to change them (`docs/app.md` "Filters"). */
export interface PageFilters {
  /** The filters the page applies: none where the deployment cannot filter (`unanswered` holds the address's). */
  chips: FilterChip[];
  /** Whether the deployment answers filters (`capabilities.ts`): else no row, chip or dialog offers one. */
  enabled: boolean;
  /** The address's filters a deployment that cannot filter leaves out, said once by the filter bar. */
  unanswered: FilterChip[];
  /** `f` parameters of the address that were not understood and are left out. */
  ignored: number;
  /** The report API's `filters` parameter, undefined when unfiltered. */
  json: string | undefined;
  /** The current query string (`?…` or `''`). */
  search: string;
  /** This page's address with `chips` as its filters (a link: back and forward step through filter changes). */
  href(chips: readonly FilterChip[]): string;
}

/**
 * The filters in the current address (`useLocation`), re-read at every navigation; where the deployment does not
 * answer filters, none (the address's are in `unanswered`), so every request is the unfiltered one.
 */
export function useFilters(): PageFilters {
  const { url, path } = useLocation();
  const enabled = useFilteredReports();
  const at = url.indexOf('?');
  const search = at < 0 ? '' : url.slice(at);
  const read = filtersFromSearch(search);
  const chips = enabled ? read.chips : [];
  return {
    chips,
    enabled,
    unanswered: enabled ? [] : read.chips,
    ignored: read.ignored,
    json: apiFilters(chips),
    search,
    href: (next) => `${path}${searchWithFilters(search, next)}`,
  };
}

/** A 400 about the `filters` parameter: its message starts with `filters:` (`docs/api.md` "Filters", "Errors"). */
export function isFiltersError(e: unknown): boolean {
  return e instanceof ApiError && e.status === 400 && (e.field === 'filters' || e.message.startsWith('filters:'));
}
