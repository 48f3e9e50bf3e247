import { createHash } from 'node:crypto';

/**
 * Distinct visitors of a period, mergeable across periods (DESIGN.md
 * "Distinct visitors over any range"): the exact set of visitor ids while it
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
const ALPHA = 0.7213 / (1 + 1.079 / M);

export type VisitorSketch = { kind: 'exact'; ids: Set<string> } | { kind: 'hll'; registers: Uint8Array };

export const emptySketch = (): VisitorSketch => ({ kind: 'exact', ids: new Set() });

function addToRegisters(registers: Uint8Array, id: string): void {
  // 64 bits of SHA-1: the first p bits pick the register, the rank is the
  // position of the first 1 in the remaining 64 - p bits (1-based).
  const digest = createHash('sha1').update(id).digest();
  const hi = digest.readUInt32BE(0);
  const lo = digest.readUInt32BE(4);
  const index = hi >>> (32 - HLL_PRECISION);
  const next32 = ((hi << HLL_PRECISION) | (lo >>> (32 - HLL_PRECISION))) >>> 0;
  const tail = (lo << HLL_PRECISION) >>> 0;
  const rank = next32 !== 0 ? Math.clz32(next32) + 1 : tail !== 0 ? 33 + Math.clz32(tail) : 65 - HLL_PRECISION;
  if (rank > (registers[index] ?? 0)) registers[index] = rank;
}

function toRegisters(ids: Iterable<string>): Uint8Array {
  const registers = new Uint8Array(M);
  for (const id of ids) addToRegisters(registers, id);
  return registers;
}

/** Adds visitor ids to a sketch (in place when possible); returns the sketch to keep. */
export function addVisitors(sketch: VisitorSketch, ids: Iterable<string>): VisitorSketch {
  if (sketch.kind === 'hll') {
    for (const id of ids) addToRegisters(sketch.registers, id);
    return sketch;
  }
  for (const id of ids) sketch.ids.add(id);
  return sketch.ids.size > EXACT_LIMIT ? { kind: 'hll', registers: toRegisters(sketch.ids) } : sketch;
}

/**
 * Unions sketches (periods of a range) into one. The result is exact when all
 * inputs are exact, whatever the size of the union; it is only for counting.
 */
export function unionSketches(sketches: readonly VisitorSketch[]): VisitorSketch {
  if (sketches.every((s) => s.kind === 'exact')) {
    const ids = new Set<string>();
    for (const s of sketches) for (const id of s.ids) ids.add(id);
    return { kind: 'exact', ids };
  }
  const registers = new Uint8Array(M);
  for (const s of sketches) {
    const other = s.kind === 'hll' ? s.registers : toRegisters(s.ids);
    for (let i = 0; i < M; i++) if ((other[i] ?? 0) > (registers[i] ?? 0)) registers[i] = other[i] ?? 0;
  }
  return { kind: 'hll', registers };
}

/** Distinct visitors in the sketch: exact, or the HyperLogLog estimate rounded to an integer. */
export function countVisitors(sketch: VisitorSketch): number {
  if (sketch.kind === 'exact') return sketch.ids.size;
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < M; i++) {
    const r = sketch.registers[i] ?? 0;
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const raw = (ALPHA * M * M) / sum;
  // Small range: linear counting is more accurate while registers are still empty.
  if (raw <= 2.5 * M && zeros > 0) return Math.round(M * Math.log(M / zeros));
  return Math.round(raw);
}

/** Stored form: the ids (exact) or the registers (binary). */
export function serializeSketch(sketch: VisitorSketch): { ids: string[] } | { hll: Uint8Array } {
  return sketch.kind === 'exact' ? { ids: [...sketch.ids].sort() } : { hll: sketch.registers };
}

export function deserializeSketch(stored: { ids?: string[] | null; hll?: Uint8Array | null }): VisitorSketch {
  if (stored.hll && stored.hll.length === M) return { kind: 'hll', registers: new Uint8Array(stored.hll) };
  return { kind: 'exact', ids: new Set(stored.ids ?? []) };
}
