import { HLL_PRECISION, estimateOfRanks } from '../lambdas/domain/visitor-sketch.js';

/**
 * The visitor key in the visit table (`visitor_key UBIGINT`, `docs/data-model.md`, "Filtered reports"):
 * `visitorKey` of `lambdas/domain/visitor-sketch.ts`, the first 64 bits big-endian of SHA-1 of the
 * visitor id, which the writer stores per visit; and the HyperLogLog registers and ranks SQL builds from
 * it, the unfiltered sketch's own (register: the top `HLL_PRECISION` bits; rank: 1 + the leading zeros
 * of the other bits, one more than their count when they are all zero).
 */

/** `visitorKey` in SQL, over a VARCHAR visitor id (DuckDB's `sha1` hashes its UTF-8 bytes, as `node:crypto` does). */
export const visitorKeySql = (column: string) => `('0x' || substr(sha1(${column}), 1, 16))::UBIGINT`;

/**
 * `source` (a relation with `visitor_key`) with each row's register (`reg`, the key's top `precision` bits)
 * and rank (`rank`), by integer operations only: the bits below the register's (the tail) are smeared right
 * (each bit ORs into every lower one), so their count is the position of the highest set bit, its bit length;
 * the rank is one more than the tail's width less that length (the tail's width plus one when it is zero). A
 * double's `log2` would round a tail just under a power of two up, one rank too low.
 */
export function withRegisters(source: string, precision = HLL_PRECISION): string {
  const mask = (1n << BigInt(64 - precision)) - 1n;
  let smeared = `SELECT *, visitor_key & ${mask}::UBIGINT AS tail FROM (${source})`;
  for (const shift of [1, 2, 4, 8, 16, 32])
    smeared = `SELECT * REPLACE (tail | (tail >> ${shift}) AS tail) FROM (${smeared})`;
  return `SELECT * EXCLUDE (tail), visitor_key >> ${64 - precision} AS reg, ${64 - precision + 1} - bit_count(tail) AS rank FROM (${smeared})`;
}

/**
 * Per group of `source` (`groups`: its column names, none for one row): distinct visitors, by both of the
 * unfiltered sketch's ways, and additive sums. `exact_visitors`, the distinct keys of the rows where `exact`
 * (a SQL boolean, constant within a group) holds, counted per register and summed (a key has one register);
 * `ranks` and `rank_counts`, how many of the group's registers hold each non-zero rank (the registers as
 * `withRegisters` builds them: the maximum rank per register), what `estimateOfRanks` takes; and each of
 * `sums` (`<aggregate> AS <name>`, additive over registers: count, sum, or a distinct count of something
 * one visitor has, such as visits) under its name. Registers of 2^`precision`. One scan of `source`.
 */
export function visitorGroups(
  source: string,
  groups: readonly string[],
  exact: string,
  sums: readonly string[],
  precision = HLL_PRECISION,
): string {
  const names = sums.map((s) => s.slice(s.lastIndexOf(' AS ') + 4));
  const keys = groups.map((g) => `${g}, `).join('');
  // A distinct aggregate takes DuckDB's slower, less parallel path even when its filter is constant false.
  const exactKeys =
    exact === 'false' ? '0 AS exact_keys' : `count(DISTINCT visitor_key) FILTER (WHERE ${exact}) AS exact_keys`;
  const inner =
    `SELECT ${keys}reg, max(rank) AS rank, ${exactKeys}` +
    `${sums.map((s) => `, ${s}`).join('')} FROM (${withRegisters(source, precision)}) GROUP BY ${keys}reg`;
  const h = `histogram(rank) FILTER (WHERE rank IS NOT NULL)`;
  return (
    `SELECT ${keys}coalesce(sum(exact_keys), 0) AS exact_visitors, map_keys(${h}) AS ranks, ` +
    `map_values(${h}) AS rank_counts${names.map((n) => `, coalesce(sum(${n}), 0) AS ${n}`).join('')} ` +
    `FROM (${inner})${groups.length > 0 ? ` GROUP BY ${groups.join(', ')}` : ''}`
  );
}

/**
 * A group's distinct visitors from a `visitorGroups` row: exact (`exact_visitors`) or the estimate of its
 * registers by the sketch's own estimator (`estimateOfRanks`, 2^`precision` registers).
 */
export function visitorsOf(row: Record<string, unknown>, exact: boolean, precision = HLL_PRECISION): number {
  if (exact) return Number(row.exact_visitors ?? 0);
  const ranks: number[] = [];
  const counts = (row.rank_counts as unknown[] | null) ?? [];
  ((row.ranks as unknown[] | null) ?? []).forEach((r, i) => (ranks[Number(r)] = Number(counts[i])));
  return estimateOfRanks(1 << precision, ranks);
}
