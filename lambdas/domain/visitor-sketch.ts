import { createHash } from 'node:crypto';

/**
 * Distinct visitors of a period, mergeable across periods (`docs/data-model.md`
 * "Distinct visitors"): the exact set of visitor ids while it
 * has at most `EXACT_LIMIT` members, then a HyperLogLog sketch (Flajolet et al.
 * 2007, with the small-range linear-counting correction of Heule et al. 2013,
 * "HyperLogLog in Practice", §5.2).
 *
 * Counting over a range unions the periods' sketches: exact when every period
 * is still exact (the union of exact sets is computed exactly, whatever its
 * size), else an estimate with a relative standard error of 1.04/√m = 0.81%
 * for m = 2^14 registers (measured in test/domain/visitor-sketch.test.ts and
 * docs/data-model.md).
 */
export const EXACT_LIMIT = 1000;
/** log2 of the register count. */
export const HLL_PRECISION = 14;
const M = 1 << HLL_PRECISION;

/**
 * When a sketch turns from exact ids into registers: at more than `exact`
 * ids, into 2^`precision` registers (relative standard error 1.04/√2^precision).
 * The visitors of `visits` rollups use the default; smaller sketches (goal
 * visitors, `docs/data-model.md`) pass their own.
 */
export interface SketchLimits {
  exact: number;
  precision: number;
}
export const VISITOR_LIMITS: SketchLimits = { exact: EXACT_LIMIT, precision: HLL_PRECISION };

/** log2 of a register array's length (a power of two). */
const precisionOf = (registers: Uint8Array) => 31 - Math.clz32(registers.length);

export type VisitorSketch = { kind: 'exact'; ids: Set<string> } | { kind: 'hll'; registers: Uint8Array };

export const emptySketch = (): VisitorSketch => ({ kind: 'exact', ids: new Set() });

/** SHA-1 of a visitor id's UTF-8 bytes: its first 64 bits are the visitor's key. */
const digestOf = (id: string): Buffer => createHash('sha1').update(id).digest();

/**
 * A visitor's key: the first 64 bits, big-endian, of SHA-1 of the id (its UTF-8 bytes), the bits the
 * sketch's registers and ranks are taken from; the visit table stores it per visit (`visitor_key`,
 * `docs/data-model.md`, "Filtered reports") so a filtered count builds the same registers.
 */
export const visitorKey = (id: string): bigint => digestOf(id).readBigUInt64BE(0);

function addToRegisters(registers: Uint8Array, id: string): void {
  // 64 bits of SHA-1: the first p bits pick the register, the rank is the
  // position of the first 1 in the remaining 64 - p bits (1-based).
  const p = precisionOf(registers);
  const digest = digestOf(id);
  const hi = digest.readUInt32BE(0);
  const lo = digest.readUInt32BE(4);
  const index = hi >>> (32 - p);
  const next32 = ((hi << p) | (lo >>> (32 - p))) >>> 0;
  const tail = (lo << p) >>> 0;
  const rank = next32 !== 0 ? Math.clz32(next32) + 1 : tail !== 0 ? 33 + Math.clz32(tail) : 65 - p;
  if (rank > (registers[index] ?? 0)) registers[index] = rank;
}

function toRegisters(ids: Iterable<string>, m = M): Uint8Array {
  const registers = new Uint8Array(m);
  for (const id of ids) addToRegisters(registers, id);
  return registers;
}

/** Adds visitor ids to a sketch (in place when possible); returns the sketch to keep. */
export function addVisitors(
  sketch: VisitorSketch,
  ids: Iterable<string>,
  limits: SketchLimits = VISITOR_LIMITS,
): VisitorSketch {
  if (sketch.kind === 'hll') {
    for (const id of ids) addToRegisters(sketch.registers, id);
    return sketch;
  }
  for (const id of ids) sketch.ids.add(id);
  return sketch.ids.size > limits.exact
    ? { kind: 'hll', registers: toRegisters(sketch.ids, 1 << limits.precision) }
    : sketch;
}

/**
 * Unions sketches (periods of a range) into one. The result is exact when all
 * inputs are exact, whatever the size of the union; it is only for counting.
 * @throws Error when two register sketches have different precisions
 */
export function unionSketches(sketches: readonly VisitorSketch[]): VisitorSketch {
  if (sketches.every((s) => s.kind === 'exact')) {
    const ids = new Set<string>();
    for (const s of sketches) for (const id of s.ids) ids.add(id);
    return { kind: 'exact', ids };
  }
  // Sketches of one metric share a precision; exact ids are hashed into it.
  const m = Math.max(...sketches.map((s) => (s.kind === 'hll' ? s.registers.length : 0)));
  const registers = new Uint8Array(m);
  for (const s of sketches) {
    const other = s.kind === 'hll' ? s.registers : toRegisters(s.ids, m);
    if (other.length !== m) throw new Error(`cannot union sketches of ${other.length} and ${m} registers`);
    for (let i = 0; i < m; i++) if ((other[i] ?? 0) > (registers[i] ?? 0)) registers[i] = other[i] ?? 0;
  }
  return { kind: 'hll', registers };
}

/** Distinct visitors in the sketch: exact, or the HyperLogLog estimate rounded to an integer (`estimateOfRanks`). */
export function countVisitors(sketch: VisitorSketch): number {
  if (sketch.kind === 'exact') return sketch.ids.size;
  const ranks: number[] = [];
  for (const r of sketch.registers) ranks[r] = (ranks[r] ?? 0) + 1;
  return estimateOfRanks(sketch.registers.length, ranks);
}

/**
 * The HyperLogLog estimate, rounded, of `m` registers described by how many hold each rank (`ranks[r]`,
 * absent for none; the registers not counted at any rank are zero): what `countVisitors` computes from a
 * sketch's registers, and what a filtered count computes from registers built in SQL
 * (`docs/data-model.md`, "Filtered reports"), so both give the same figure for the same registers. The
 * sum of 2^-rank is taken by rank, in one order whatever the registers' order.
 */
export function estimateOfRanks(m: number, ranks: ReadonlyArray<number | undefined>): number {
  const alpha = 0.7213 / (1 + 1.079 / m);
  let nonZero = 0;
  let sum = 0;
  for (let r = 1; r < ranks.length; r++) {
    nonZero += ranks[r] ?? 0;
    sum += (ranks[r] ?? 0) * 2 ** -r;
  }
  const zeros = m - nonZero;
  sum += zeros;
  const raw = (alpha * m * m) / sum;
  // Small range: linear counting is more accurate while registers are still empty.
  if (raw <= 2.5 * m && zeros > 0) return Math.round(m * Math.log(m / zeros));
  return Math.round(raw);
}

/** Stored form: the ids (exact) or the registers (binary). */
export function serializeSketch(sketch: VisitorSketch): { ids: string[] } | { hll: Uint8Array } {
  return sketch.kind === 'exact' ? { ids: [...sketch.ids].sort() } : { hll: sketch.registers };
}

export function deserializeSketch(stored: { ids?: string[] | null; hll?: Uint8Array | null }): VisitorSketch {
  const n = stored.hll?.length ?? 0;
  // Any power of two from 2^4 registers up: `visits` sketches have 2^14, goal sketches fewer.
  if (stored.hll && n >= 16 && (n & (n - 1)) === 0) return { kind: 'hll', registers: new Uint8Array(stored.hll) };
  return { kind: 'exact', ids: new Set(stored.ids ?? []) };
}
