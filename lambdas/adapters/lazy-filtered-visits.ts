import { lazyPort } from '../forward-port.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../ports.js';

/**
 * A `FilteredVisits` built at its first call: the report and MCP functions load DuckDB (its native
 * library, about 68 MB, and its JavaScript, a file of the bundle of its own) only when a filtered
 * report is asked for, so unfiltered requests keep their cold start.
 */
export function lazyFilteredVisits(build: () => Promise<FilteredVisits>): FilteredVisits {
  return lazyPort(FILTERED_VISITS_METHODS, build);
}
