import { forwardPort, type AsyncMethodOf } from '../forward-port.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../ports.js';

/**
 * A port implementation built at its first call and kept (a failed build is tried again at the next call).
 * @param methods the port's method names (`portMethods`)
 * @param build makes the implementation: the place to `import()` what only it needs
 */
export function lazyPort<P, K extends AsyncMethodOf<P>>(methods: readonly K[], build: () => Promise<P>): Pick<P, K> {
  let built: Promise<P> | undefined;
  const get = () => {
    built ??= build();
    built.catch(() => (built = undefined));
    return built;
  };
  return forwardPort(methods, get);
}

/**
 * A `FilteredVisits` built at its first call: the report and MCP functions load DuckDB (its native
 * library, about 68 MB, and its JavaScript, a file of the bundle of its own) only when a filtered
 * report is asked for, so unfiltered requests keep their cold start.
 */
export function lazyFilteredVisits(build: () => Promise<FilteredVisits>): FilteredVisits {
  return lazyPort(FILTERED_VISITS_METHODS, build);
}
