import { FilteredCallSchema, fromWire, packResult } from '../adapters/filtered-wire.js';
import type { FilteredVisits } from '../ports.js';

/**
 * The filtered function's handler (`docs/data-model.md`, "Filtered reports"): the report and MCP
 * functions invoke it synchronously with `{method, args}` (`FilteredCallSchema`, arguments in
 * `toWire`'s form); it runs that method of `engine` (DuckDB over the visit table) and returns the
 * result in that form, gzipped when large (`packResult`). A throw is the invocation's function error, which the caller answers 503.
 * @throws ZodError when the event is not a call; what the engine's method throws
 */
export function createFilteredHandler(engine: FilteredVisits): (event: unknown) => Promise<unknown> {
  return async (event) => {
    const call = FilteredCallSchema.parse(event);
    const method = engine[call.method] as (...args: unknown[]) => Promise<unknown>;
    return packResult(await method.apply(engine, fromWire(call.args) as unknown[]));
  };
}
