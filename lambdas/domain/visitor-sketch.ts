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

function addToRegisters(registers: Uint8Array, id: string): void {
  // 64 bits of SHA-1: the first p bits pick the register, the rank is the
  // position of the first 1 in the remaining 64 - p bits (1-based).
  const p = precisionOf(registers);
  const digest = createHash('sha1').update(id).digest();
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

/** Distinct visitors in the sketch: exact, or the HyperLogLog estimate rounded to an integer. */
export function countVisitors(sketch: VisitorSketch): number {
  if (sketch.kind === 'exact') return sketch.ids.size;
  const m = sketch.registers.length;
  const alpha = 0.7213 / (1 + 1.079 / m);
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < m; i++) {
    const r = sketch.registers[i] ?? 0;
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
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
