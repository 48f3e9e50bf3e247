import type * as VisitTableDeps from '../wiring/visit-table-deps.js';

/**
 * Set by the bundler (`bench/bundle.ts`, `DUCKDB_CHUNK`) to the DuckDB chunk's file beside the
 * bundle; absent when the code runs from source (tests, the local twin).
 */
declare const __FOOTFALL_DUCKDB_CHUNK__: string | undefined;

/**
 * The DuckDB-using wiring (`lambdas/wiring/visit-table-deps.ts`: the filtered engine and the visit
 * table's writer), loaded at the first call. In a Lambda bundle it is a file of its own beside the
 * entry's (a specifier esbuild does not follow), so a function parses DuckDB's JavaScript only when
 * it first needs it, and a bundle without the chunk (`filteredReports` off) never asks for it.
 * @throws Error when the module or DuckDB's native library cannot be loaded
 */
export function loadVisitTableDeps(): Promise<typeof VisitTableDeps> {
  const specifier =
    typeof __FOOTFALL_DUCKDB_CHUNK__ === 'string' ? __FOOTFALL_DUCKDB_CHUNK__ : '../wiring/visit-table-deps.js';
  return import(specifier) as Promise<typeof VisitTableDeps>;
}
