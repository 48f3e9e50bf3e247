import { describe, expect, it } from 'vitest';
import { rollupDelta } from '../support/rollup.js';
import { mergeRollupItem, parseRollupItem } from '../../lambdas/adapters/dynamo/rollup-codec.js';
import { GOAL_KEYS_PER_ITEM, GOAL_VISITOR_LIMITS, OTHER_GOALS_KEY } from '../../lambdas/domain/rollup.js';
import { countVisitors } from '../../lambdas/domain/visitor-sketch.js';

const delta = rollupDelta;

describe('mergeRollupItem: storage adds any counter and unions any sketch (RollupDelta contract)', () => {
  it('adds named counters of visits items, whatever their names, beside visits, page views and visitors', () => {
    const first = mergeRollupItem(
      undefined,
      delta('visits', {
        visits: 2,
        pageviews: 3,
        counters: new Map([
          ['bounces', 1],
          ['duration_ms', 5000],
        ]),
        visitors: new Set(['a', 'b']),
      }),
    );
    const second = mergeRollupItem(
      first,
      delta('visits', {
        visits: 1,
        pageviews: 1,
        counters: new Map([
          ['bounces', 1],
          ['a_new_counter', 7],
        ]),
        visitors: new Set(['b', 'c']),
      }),
    );
    const item = parseRollupItem(second);
    expect(item).toMatchObject({
      visits: 3,
      pageviews: 4,
      counters: { bounces: 2, duration_ms: 5000, a_new_counter: 7 },
      ids: ['a', 'b', 'c'],
    });
    const back = parseRollupItem(
      mergeRollupItem(second, delta('visits', { visits: -1, counters: new Map([['a_new_counter', -7]]) })),
    );
    expect(back.counters).toEqual({ bounces: 2, duration_ms: 5000 });
  });

  it('keeps per-goal counts, completions and visitor sketches; a sketch turns to 2^10 registers past 32 ids', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `visitor-${i}`);
    let item = mergeRollupItem(
      undefined,
      delta('goal', {
        values: new Map([['Signup', 1]]),
        counters: new Map([['Signup', 2]]),
        valueVisitors: new Map([['Signup', new Set(ids.slice(0, 10))]]),
      }),
    );
    expect(parseRollupItem(item).valueSketches.Signup?.kind).toBe('exact');
    item = mergeRollupItem(
      item,
      delta('goal', {
        values: new Map([['Signup', 5]]),
        counters: new Map([['Signup', 5]]),
        valueVisitors: new Map([['Signup', new Set(ids)]]),
      }),
    );
    const read = parseRollupItem(item);
    expect(read.counts).toEqual({ Signup: 6 });
    expect(read.counters).toEqual({ Signup: 7 });
    const sketch = read.valueSketches.Signup;
    expect(sketch?.kind).toBe('hll');
    if (sketch?.kind === 'hll') expect(sketch.registers.length).toBe(1 << GOAL_VISITOR_LIMITS.precision);
    expect(Math.abs(countVisitors(sketch!) - 500) / 500).toBeLessThan(0.1);
  });

  it('folds goal keys beyond GOAL_KEYS_PER_ITEM into the other-goals key, and keeps a key whose count returns to 0', () => {
    const many = new Map(Array.from({ length: GOAL_KEYS_PER_ITEM + 5 }, (_, i) => [`goal ${i}`, 1]));
    const item = mergeRollupItem(
      undefined,
      delta('goal', {
        values: many,
        counters: many,
        valueVisitors: new Map([...many.keys()].map((k) => [k, new Set(['v'])])),
      }),
    );
    const read = parseRollupItem(item);
    expect(Object.keys(read.counts)).toHaveLength(GOAL_KEYS_PER_ITEM + 1);
    expect(read.counts[OTHER_GOALS_KEY]).toBe(5);
    expect(read.counters[OTHER_GOALS_KEY]).toBe(5);
    expect(countVisitors(read.valueSketches[OTHER_GOALS_KEY]!)).toBe(1);
    // Taking back a folded key goes to the same place.
    const back = parseRollupItem(
      mergeRollupItem(
        item,
        delta('goal', {
          values: new Map([
            [`goal ${GOAL_KEYS_PER_ITEM + 2}`, -1],
            ['goal 0', -1],
          ]),
        }),
      ),
    );
    expect(back.counts[OTHER_GOALS_KEY]).toBe(4);
    expect(back.counts['goal 0']).toBe(0);
  });
});
