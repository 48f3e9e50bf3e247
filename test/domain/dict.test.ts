import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { dict, own, parseDict } from '../../lambdas/domain/dict.js';
import { mergeRollupItem, parseRollupItem } from '../../lambdas/adapters/dynamo/rollup-codec.js';
import { realtimeReport, type RealtimeSlice } from '../../lambdas/domain/realtime.js';
import {
  NONE,
  cohortOf,
  deserializeGroups,
  serializeGroups,
  type PayerSummary,
} from '../../lambdas/domain/reports/cohorts.js';
import { countVisitors } from '../../lambdas/domain/visitor-sketch.js';
import { rollupDelta } from '../support/rollup.js';

/** Names of `Object.prototype`'s members, and `__proto__`: keys a plain `{}` answers without holding them. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
/** Keys as visitors send them: any text, the prototype names often. */
const key = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 12 }));

describe('dict: any text is a key like any other', () => {
  it('holds and answers every prototype name as its own key, and nothing it does not hold', () => {
    const d = dict<number>(PROTOTYPE_NAMES.map((n, i) => [n, i] as const));
    expect(Object.keys(d)).toEqual(PROTOTYPE_NAMES);
    expect(PROTOTYPE_NAMES.map((n) => d[n])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(dict<number>().constructor).toBeUndefined();
    expect(own({}, 'constructor')).toBeUndefined();
    expect(own({ constructor: 1 }, 'constructor')).toBe(1);
    // JSON keeps "__proto__" as an own key; the copy has no prototype to answer the rest.
    const parsed = parseDict<number>('{"__proto__":1,"valueOf":2}');
    expect([parsed.__proto__, parsed.valueOf, parsed.toString]).toEqual([1, 2, undefined]);
    expect(Object.keys(parseDict('[1]'))).toEqual([]);
  });

  it('reads a rollup item stored before the fix with such names, and adds to it', () => {
    // The JSON a compaction wrote for values and goal keys named after prototype members.
    const stored = {
      counts: '{"__proto__":3,"constructor":2,"toString":1}',
      n: '{"__proto__":4,"constructor":2}',
      vv: '{"__proto__":["a","b"],"constructor":["c"]}',
    };
    const item = parseRollupItem(stored);
    expect(item.counts).toEqual(
      dict([
        ['__proto__', 3],
        ['constructor', 2],
        ['toString', 1],
      ]),
    );
    expect(countVisitors(own(item.valueSketches, 'constructor')!)).toBe(1);
    const merged = parseRollupItem(
      mergeRollupItem(
        stored,
        rollupDelta('goal', {
          values: new Map([
            ['__proto__', 1],
            ['valueOf', 1],
          ]),
          counters: new Map([['constructor', 5]]),
          valueVisitors: new Map([['__proto__', new Set(['z'])]]),
        }),
      ),
    );
    const entries = (d: Record<string, unknown>) => new Map(Object.entries(d));
    expect(entries(merged.counts)).toEqual(
      new Map([
        ['__proto__', 4],
        ['constructor', 2],
        ['toString', 1],
        ['valueOf', 1],
      ]),
    );
    expect(entries(merged.counters)).toEqual(
      new Map([
        ['__proto__', 4],
        ['constructor', 7],
      ]),
    );
    expect(countVisitors(own(merged.valueSketches, '__proto__')!)).toBe(3);
  });

  it('property: merged rollup counts, realtime and cohort groups equal a Map over any keys', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`dict property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(key, fc.integer({ min: 1, max: 5 })), { maxLength: 6 }), { maxLength: 4 }),
        (batches) => {
          // Rollup: each batch a delta folded into the stored item; the oracle a Map.
          let item: Record<string, unknown> | undefined;
          const expected = new Map<string, number>();
          for (const batch of batches) {
            const values = new Map<string, number>();
            for (const [k, n] of batch) {
              values.set(k, (values.get(k) ?? 0) + n);
              expected.set(k, (expected.get(k) ?? 0) + n);
            }
            item = mergeRollupItem(item, rollupDelta('referrer', { values }));
          }
          const counts = item ? parseRollupItem(item).counts : dict<number>();
          expect(new Map(Object.entries(counts))).toEqual(expected);

          // Realtime: every key a visitor id, each counted once.
          const ids = new Set(batches.flat().map(([k]) => k));
          const slice: RealtimeSlice = {
            site: 's',
            minute: '2026-03-05T10:00',
            visitors: dict([...ids].map((id): [string, [number, string | null, string[]]] => [id, [1000, id, ['/']]])),
          };
          const report = realtimeReport([slice], 1000, 100);
          expect(report.visitors).toBe(ids.size);

          // Cohorts: every key a referrer group, through the stored JSON.
          const members = [...ids].map((id): PayerSummary => ({
            day: '2026-03-05',
            g: ['Referral', id, ''],
            first: 100,
            net: 100,
            refunded: 0,
            refund: false,
            judged: false,
            until: null,
          }));
          const groups = deserializeGroups(serializeGroups(cohortOf(members).referrers));
          expect(Object.keys(groups).sort()).toEqual([...ids].map((id) => id || NONE).sort());
          for (const id of ids) expect(groups[id || NONE]?.customers, id).toBe(1);
        },
      ),
      { seed, numRuns: 200 },
    );
  });
});
