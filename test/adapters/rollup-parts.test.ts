import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { rollupDelta } from '../support/rollup.js';
import {
  ROLLUP_PART_BYTES,
  foldGroup,
  type LoggedDelta,
  valueBytes,
} from '../../lambdas/adapters/dynamo/rollup-fold.js';
import { formatPosition } from '../../lambdas/adapters/dynamo/rollup-log.js';
import { propertyRuns } from '../support/suite.js';

const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);

type Stored = Array<Record<string, unknown> | undefined>;

/** Writes a fold's changed parts in part order, as the compactor does, stopping (a crash) after `limit` writes. */
function write(stored: Stored, logged: readonly LoggedDelta[], limit = Number.POSITIVE_INFINITY): Stored {
  const out = [...stored];
  const { folded, count } = foldGroup(stored, logged);
  let writes = 0;
  for (const [i, part] of folded.entries()) {
    if (!part) continue;
    if (writes++ >= limit) break;
    out[i] = { ...part.attributes, ...(i === 0 && count > 1 ? { p: count } : {}), seq: part.seq };
  }
  return out;
}

/** Value → count over the parts, asserting each value is in one part and each part within the bound. */
function sums(stored: Stored): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of stored) {
    if (!item) continue;
    const counts = JSON.parse(String(item.counts ?? '{}')) as Record<string, number>;
    expect([...Object.keys(counts)].reduce((n, v) => n + valueBytes(v), 0)).toBeLessThanOrEqual(ROLLUP_PART_BYTES);
    for (const [v, n] of Object.entries(counts)) {
      expect(out.has(v), `${v.slice(0, 12)} in two parts`).toBe(false);
      out.set(v, n);
    }
  }
  return out;
}

/** A value of the pool: its index, then padding to a length between 500 and 6,000 characters. */
const poolValue = (i: number) => `/v${i}/${'x'.repeat(500 + ((i * 7919) % 5500))}`;

describe('foldGroup: dimension buckets split into parts, each value in one part, exactly once across crashes', () => {
  it('puts values past the bound into new parts, records the count on part 0, and keeps a value where it first landed', () => {
    const values = new Map(Array.from({ length: 40 }, (_, i) => [poolValue(i), 1] as [string, number]));
    const once = write(
      [],
      [{ shard: 's', position: { sequence: 1n, part: 0 }, delta: rollupDelta('page', { values }) }],
    );
    expect(once.length).toBeGreaterThan(3);
    expect(once[0]?.p).toBe(once.length);
    const again = write(once, [
      {
        shard: 's',
        position: { sequence: 2n, part: 0 },
        delta: rollupDelta('page', {
          values: new Map([
            [poolValue(0), 5],
            [poolValue(39), -1],
            ['/new', 1],
          ]),
        }),
      },
    ]);
    expect(sums(again).get(poolValue(0))).toBe(6);
    expect(sums(again).get(poolValue(39))).toBe(0);
    // Only the parts holding a changed value are rewritten; a new value goes to the last part.
    expect(again.filter((p, i) => p !== once[i]).length).toBeLessThanOrEqual(3);
    expect(JSON.parse(String(again.at(-1)?.counts))).toHaveProperty(['/new']);
    // `visits` and `goal` items are never split.
    expect(
      foldGroup([], [{ shard: 's', position: { sequence: 1n, part: 0 }, delta: rollupDelta('goal', { values }) }])
        .count,
    ).toBe(1);
  });

  it('for any deltas, shards, crash points and new deltas arriving between attempts, counts every delta once', () => {
    console.log(`rollup parts property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const delta = fc.record({
      shard: fc.constantFrom('shard-a', 'shard-b'),
      values: fc.array(fc.tuple(fc.integer({ min: 0, max: 80 }), fc.integer({ min: -2, max: 3 })), {
        minLength: 1,
        maxLength: 8,
      }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(delta, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(12), { minLength: 5, maxLength: 5 }),
        (rounds, crashes) => {
          let stored: Stored = [];
          let pending: LoggedDelta[] = [];
          const expected = new Map<string, number>();
          const next: Record<string, bigint> = { 'shard-a': 0n, 'shard-b': 0n };
          for (const [r, round] of rounds.entries()) {
            // New deltas join the log (in log order: by shard, then position), then a compaction crashes
            // after some writes and another finishes it, as a retry would; then the folded deltas go.
            for (const d of round) {
              const values = new Map<string, number>();
              for (const [v, n] of d.values) values.set(poolValue(v), (values.get(poolValue(v)) ?? 0) + n);
              for (const [v, n] of values) expected.set(v, (expected.get(v) ?? 0) + n);
              next[d.shard] = (next[d.shard] ?? 0n) + 1n;
              pending.push({
                shard: d.shard,
                position: { sequence: next[d.shard] ?? 0n, part: 0 },
                delta: rollupDelta('page', { values }),
              });
            }
            pending.sort((a, b) =>
              a.shard !== b.shard ? (a.shard < b.shard ? -1 : 1) : a.position.sequence < b.position.sequence ? -1 : 1,
            );
            stored = write(stored, pending, crashes[r] ?? 0);
            if (r % 2 === 1) continue; // the crashed run's deltas stay pending into the next round
            stored = write(stored, pending);
            // A reader folding what is still pending into what is stored sees the same sums.
            expect(foldGroup(stored, pending).folded.every((p) => p === null)).toBe(true);
            pending = [];
          }
          // What a reader sees with deltas still pending equals what the compactor then writes.
          const { folded } = foldGroup(stored, pending);
          const read = Array.from(
            { length: Math.max(stored.length, folded.length) },
            (_, i) => folded[i]?.attributes ?? stored[i],
          );
          stored = write(stored, pending);
          const got = sums(stored);
          expect(sums(read)).toEqual(got);
          for (const [v, n] of expected) expect(got.get(v) ?? 0, v.slice(0, 12)).toBe(n);
          for (const v of got.keys()) expect(expected.has(v)).toBe(true);
          // Every part records the last position it took from each shard.
          for (const item of stored)
            if (item)
              for (const mark of Object.values(item.seq as Record<string, string>)) expect(mark).toMatch(/^\d+\.0$/);
        },
      ),
      { seed, numRuns: propertyRuns(40, 150), endOnFailure: true },
    );
    expect(formatPosition({ sequence: 1n, part: 0 })).toBe('1.0');
  });
});
