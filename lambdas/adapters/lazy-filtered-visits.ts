import { lazyPort } from '../forward-port.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../ports.js';

/**
 * A `FilteredVisits` built at its first call: the filtered function loads DuckDB (its native library,
 * about 68 MB, and its JavaScript, a file of the bundle of its own) at its first invocation, and a
 * failed load is tried again at the next.
 */
export function lazyFilteredVisits(build: () => Promise<FilteredVisits>): FilteredVisits {
  return lazyPort(FILTERED_VISITS_METHODS, build);
}
