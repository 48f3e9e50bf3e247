import { describe, expect, it } from 'vitest';
import { rollupDelta } from '../support/rollup.js';
import {
  PART_BYTES,
  comparePositions,
  decodeDeltaPart,
  deltaSk,
  encodeDeltaParts,
  formatPosition,
  parseDeltaSk,
  parsePosition,
} from '../../lambdas/adapters/dynamo/rollup-log.js';
import { foldDeltas } from '../../lambdas/adapters/dynamo/rollup-fold.js';
import { parseRollupItem } from '../../lambdas/adapters/dynamo/rollup-codec.js';

const delta = rollupDelta;

describe('rollup delta log encoding', () => {
  it('round-trips every field, whatever its name, and gives the same bytes whatever the insertion order', () => {
    const a = [
      delta('visits', {
        visits: 3,
        pageviews: 7,
        counters: new Map([
          ['bounces', 1],
          ['a_new_counter', 9],
        ]),
        visitors: new Set(['v2', 'v1']),
      }),
      delta('goal', {
        values: new Map([['Signup', 1]]),
        counters: new Map([['Signup', 2]]),
        valueVisitors: new Map([['Signup', new Set(['v1'])]]),
      }),
      delta('page', {
        values: new Map([
          ['/b', 1],
          ['/a', -1],
        ]),
      }),
    ];
    const b = [
      delta('page', {
        values: new Map([
          ['/a', -1],
          ['/b', 1],
        ]),
      }),
      delta('goal', {
        values: new Map([['Signup', 1]]),
        counters: new Map([['Signup', 2]]),
        valueVisitors: new Map([['Signup', new Set(['v1'])]]),
      }),
      delta('visits', {
        visits: 3,
        pageviews: 7,
        counters: new Map([
          ['a_new_counter', 9],
          ['bounces', 1],
        ]),
        visitors: new Set(['v1', 'v2']),
      }),
    ];
    const parts = encodeDeltaParts(a);
    expect(parts).toHaveLength(1);
    expect(Buffer.compare(parts[0] as Buffer, encodeDeltaParts(b)[0] as Buffer)).toBe(0);
    const back = decodeDeltaPart('example.com', parts[0] as Buffer);
    const visits = back.find((d) => d.key.metric === 'visits');
    expect(visits).toMatchObject({ visits: 3, pageviews: 7 });
    expect(Object.fromEntries(visits?.counters ?? [])).toEqual({ bounces: 1, a_new_counter: 9 });
    expect([...(visits?.visitors ?? [])].sort()).toEqual(['v1', 'v2']);
    expect([...(back.find((d) => d.key.metric === 'goal')?.valueVisitors.get('Signup') ?? [])]).toEqual(['v1']);
  });

  it('cuts a batch larger than a part into parts of at most PART_BYTES before compression, which sum to the batch', () => {
    const values = new Map(Array.from({ length: 3000 }, (_, i) => [`/${'x'.repeat(200)}/${i}`, 1] as [string, number]));
    const parts = encodeDeltaParts([
      delta('page', { values }),
      delta('visits', { visits: 1, visitors: new Set(Array.from({ length: 5000 }, (_, i) => `visitor-${i}`)) }),
    ]);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(PART_BYTES);
    const decoded = parts.flatMap((p) => decodeDeltaPart('example.com', p));
    const folded = foldDeltas(
      undefined,
      decoded
        .filter((d) => d.key.metric === 'page')
        .map((d, i) => ({ shard: 's', position: { sequence: 1n, part: i }, delta: d })),
    );
    expect(Object.keys(parseRollupItem(folded?.attributes ?? {}).counts)).toHaveLength(3000);
    expect(decoded.filter((d) => d.key.metric === 'visits').reduce((n, d) => n + d.visitors.size, 0)).toBe(5000);
  });

  it('orders positions by sequence number as a number, then part, and reads them back from the sort key', () => {
    const sk = deltaSk('shardId-000000000001', '49590338271490256608559692538361571095921575989136588898', 3);
    expect(parseDeltaSk(sk)).toEqual({
      shard: 'shardId-000000000001',
      position: { sequence: 49590338271490256608559692538361571095921575989136588898n, part: 3 },
    });
    expect(deltaSk('s', '9', 0) < deltaSk('s', '10', 0)).toBe(true);
    expect(comparePositions({ sequence: 9n, part: 5 }, { sequence: 10n, part: 0 })).toBe(-1);
    expect(parsePosition(formatPosition({ sequence: 10n, part: 7 }))).toEqual({ sequence: 10n, part: 7 });
  });

  it('folds a delta into an item once: at or before the position the item holds for its shard, it is skipped', () => {
    const d = delta('visits', { visits: 2, visitors: new Set(['a']) });
    const once = foldDeltas(undefined, [{ shard: 's', position: { sequence: 5n, part: 0 }, delta: d }]);
    expect(once?.seq).toEqual({ s: '5.0' });
    const item = { ...once?.attributes, seq: once?.seq };
    expect(foldDeltas(item, [{ shard: 's', position: { sequence: 5n, part: 0 }, delta: d }])).toBeNull();
    const twice = foldDeltas(item, [
      { shard: 's', position: { sequence: 5n, part: 0 }, delta: d },
      { shard: 's', position: { sequence: 6n, part: 0 }, delta: d },
      { shard: 't', position: { sequence: 1n, part: 0 }, delta: d },
    ]);
    expect(parseRollupItem(twice?.attributes ?? {}).visits).toBe(6);
    expect(twice?.seq).toEqual({ s: '6.0', t: '1.0' });
  });
});
