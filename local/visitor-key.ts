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

/** The mask of a key's bits below its register's (its tail) for registers of 2^`precision`. */
const tailMask = (precision: number) => `${(1n << BigInt(64 - precision)) - 1n}::UBIGINT`;

/**
 * `source` (a relation with `tail`, a key's bits below its register's) with each row's rank (`rank`) in place
 * of its tail, by integer operations only: the tail is smeared right (each bit ORs into every lower one), so
 * its bit count is the position of its highest set bit, its bit length; the rank is one more than the tail's
 * width less that length (the tail's width plus one when it is zero). A double's `log2` would round a tail
 * just under a power of two up, one rank too low.
 */
function ranked(source: string, precision: number): string {
  let smeared = `SELECT * FROM (${source})`;
  for (const shift of [1, 2, 4, 8, 16, 32])
    smeared = `SELECT * REPLACE (tail | (tail >> ${shift}) AS tail) FROM (${smeared})`;
  return `SELECT * EXCLUDE (tail), ${64 - precision + 1} - bit_count(tail) AS rank FROM (${smeared})`;
}

/**
 * `source` (a relation with `visitor_key`) with each row's register (`reg`, the key's top `precision` bits)
 * and rank (`rank`, `ranked`).
 */
export function withRegisters(source: string, precision = HLL_PRECISION): string {
  return ranked(
    `SELECT *, visitor_key >> ${64 - precision} AS reg, visitor_key & ${tailMask(precision)} AS tail FROM (${source})`,
    precision,
  );
}

/**
 * Per group of `source` (`groups`: its column names, none for one row): distinct visitors, by both of the
 * unfiltered sketch's ways, and additive sums. `exact_visitors`, the distinct keys of the rows where `exact`
 * (a SQL boolean, constant within a group) holds, counted per register and summed (a key has one register);
 * `ranks` and `rank_counts`, how many of the group's registers hold each non-zero rank (the registers as
 * `withRegisters` builds them: the maximum rank per register), what `estimateOfRanks` takes; and each of
 * `sums` (`<aggregate> AS <name>`, additive over registers: count, sum, or a distinct count of something
 * one visitor has, such as visits) under its name. Registers of 2^`precision`. One scan of `source`.
 *
 * A register's maximum rank is the rank of its least tail (a rank falls as the tail's bit length grows), so
 * the rows are grouped by register with the least tail, and only the groups ranked: the smear over each
 * visit cost a fifth of a year's totals (`docs/benchmarks.md`, "An unselective year").
 */
export function visitorGroups(
  source: string,
  groups: readonly string[],
  exact: string,
  sums: readonly string[],
  precision = HLL_PRECISION,
): string {
  const keys = groups.map((g) => `${g}, `).join('');
  // A distinct aggregate takes DuckDB's slower, less parallel path even when its filter is constant false.
  const exactKeys =
    exact === 'false' ? '0 AS exact_keys' : `count(DISTINCT visitor_key) FILTER (WHERE ${exact}) AS exact_keys`;
  return rankHistograms(
    `SELECT ${keys}visitor_key >> ${64 - precision} AS reg, min(visitor_key & ${tailMask(precision)}) AS tail, ` +
      `${exactKeys}${sums.map((s) => `, ${s}`).join('')} FROM (${source}) GROUP BY ${keys}reg`,
    groups,
    sums,
    precision,
  );
}

/**
 * `visitorGroups` by registers over `tailed`, the visits already grouped per register with its least tail
 * (`reg`, `tail`) and additive sums, such as `monthRegisters`: merged into coarser groups (`groups`),
 * `exact_visitors` 0 (distinct keys are not additive).
 */
export function rankedGroups(
  tailed: string,
  groups: readonly string[],
  sums: readonly string[],
  precision = HLL_PRECISION,
): string {
  const keys = groups.map((g) => `${g}, `).join('');
  return rankHistograms(
    `SELECT ${keys}reg, min(tail) AS tail, 0 AS exact_keys${sums.map((s) => `, ${s}`).join('')} ` +
      `FROM (${tailed}) GROUP BY ${keys}reg`,
    groups,
    sums,
    precision,
  );
}

/**
 * The rows of `visitorGroups` from `perRegister`: per group (`groups`) and register, the least tail, the
 * exact keys (`exact_keys`) and the sums named as in `sums`; each register ranked (`ranked`), then per group
 * the exact keys summed, the ranks' histogram and the sums.
 */
function rankHistograms(perRegister: string, groups: readonly string[], sums: readonly string[], precision: number) {
  const names = sums.map((s) => s.slice(s.lastIndexOf(' AS ') + 4));
  const keys = groups.map((g) => `${g}, `).join('');
  const h = `histogram(rank) FILTER (WHERE rank IS NOT NULL)`;
  return (
    `SELECT ${keys}coalesce(sum(exact_keys), 0) AS exact_visitors, map_keys(${h}) AS ranks, ` +
    `map_values(${h}) AS rank_counts${names.map((n) => `, coalesce(sum(${n}), 0) AS ${n}`).join('')} ` +
    `FROM (${ranked(perRegister, precision)})${groups.length > 0 ? ` GROUP BY ${groups.join(', ')}` : ''}`
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

/**
 * The totals' additive sums over visits `v`: each column's name and its aggregate. `monthRegisters` keeps them
 * per month, and the filtered totals sum them from there or take them over the visits.
 */
export const TOTAL_SUMS = [
  ['visits', 'count(*)'],
  ['pageviews', 'sum(pageviews)'],
  ['bounces', 'count(*) FILTER (WHERE bounce)'],
  ['timed_visits', 'count(*) FILTER (WHERE timed)'],
  ['duration_ms', 'sum(duration_ms)'],
] as const;

/** The names of `TOTAL_SUMS`, the columns `monthRegisters` holds besides its keys and tail (NULL in a register's row). */
export const TOTALS = TOTAL_SUMS.map(([name]) => name);

/**
 * The visits of the relation `v` per month (`period_start`, its first day) and register of the unfiltered
 * sketch, the input of `rankedGroups`: each register's least tail there (`visitorGroups`) and the totals' sums
 * (`TOTALS`). The filtered engine's totals and series by month, both by registers, read it instead of grouping
 * every visit twice (registers and sums merge over months exactly: `docs/data-model.md`, "Filtered reports").
 *
 * Where `v` is a table the load copied (`copied`), read twice: a row per month and register with its tail and
 * no sums, and a row per month with the sums and no register or tail (a NULL tail has no rank, so
 * `rankHistograms` leaves it out of the registers): a grouping by register with one aggregate and the sums
 * grouped by day (a few hundred groups) cost less than one grouping with all of them (`docs/benchmarks.md`,
 * "An unselective year: the month registers split"). Where `v` is the scan of the files, read once: a row
 * per month and register with both.
 */
export function monthRegisters(copied: boolean): string {
  const bits = HLL_PRECISION;
  // One integer key of the month (months since year 0) and the register: a cheaper group than a DATE and a register.
  const month = `(year(day) * 12 + month(day) - 1)`;
  const sumsOf = TOTAL_SUMS.map(([name, sum]) => `${sum} AS ${name}`).join(', ');
  const tails =
    `SELECT (${month} << ${bits}) | (visitor_key >> ${64 - bits})::BIGINT AS k, ` +
    `min(visitor_key & ${tailMask(bits)}) AS tail${copied ? '' : `, ${sumsOf}`} FROM v GROUP BY k`;
  // Copied, the sums come in rows of their own.
  const carried = copied ? TOTALS.map((name) => `NULL AS ${name}`) : TOTALS;
  const registers =
    `SELECT make_date(((k >> ${bits}) // 12)::INTEGER, ((k >> ${bits}) % 12 + 1)::INTEGER, 1) AS period_start, ` +
    `k & ${(1 << bits) - 1} AS reg, tail, ${carried.join(', ')} FROM (${tails})`;
  if (!copied) return registers;
  const sums =
    `SELECT date_trunc('month', day)::DATE AS period_start, NULL AS reg, NULL AS tail, ` +
    `${TOTALS.map((name) => `sum(${name}) AS ${name}`).join(', ')} FROM (SELECT day, ${sumsOf} FROM v GROUP BY day) GROUP BY 1`;
  return `${registers} UNION ALL ${sums}`;
}
