import { useLocation } from 'preact-iso';
import { ApiError } from './api.js';
import { apiFilters, filtersFromSearch, searchWithFilters, type FilterChip } from './filters.js';

/** The filters of the page's address and the ways to change them (`docs/app.md` "Filters"). */
export interface PageFilters {
  chips: FilterChip[];
  /** `f` parameters of the address that were not understood and are left out. */
  ignored: number;
  /** The report API's `filters` parameter, undefined when unfiltered. */
  json: string | undefined;
  /** The current query string (`?…` or `''`). */
  search: string;
  /** This page's address with `chips` as its filters (a link: back and forward step through filter changes). */
  href(chips: readonly FilterChip[]): string;
}

/** The filters in the current address (`useLocation`), re-read at every navigation. */
export function useFilters(): PageFilters {
  const { url, path } = useLocation();
  const at = url.indexOf('?');
  const search = at < 0 ? '' : url.slice(at);
  const { chips, ignored } = filtersFromSearch(search);
  return {
    chips,
    ignored,
    json: apiFilters(chips),
    search,
    href: (next) => `${path}${searchWithFilters(search, next)}`,
  };
}

/** A 400 about the `filters` parameter: its message starts with `filters:` (`docs/api.md` "Filters", "Errors"). */
export function isFiltersError(e: unknown): boolean {
  return e instanceof ApiError && e.status === 400 && (e.field === 'filters' || e.message.startsWith('filters:'));
}
