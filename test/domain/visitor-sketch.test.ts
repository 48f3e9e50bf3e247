import { describe, expect, it } from 'vitest';
import {
  EXACT_LIMIT,
  addVisitors,
  countVisitors,
  deserializeSketch,
  emptySketch,
  serializeSketch,
  unionSketches,
} from '../../lambdas/domain/visitor-sketch.js';
import { inputSize } from '../support/suite.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('visitor sketch: exact while small, HyperLogLog beyond', () => {
  it('is exact up to the limit and counts repeats once', () => {
    const s = addVisitors(emptySketch(), [...ids('a', EXACT_LIMIT), ...ids('a', 10)]);
    expect(s.kind).toBe('exact');
    expect(countVisitors(s)).toBe(EXACT_LIMIT);
  });

  it('turns into a sketch past the limit', () => {
    const s = addVisitors(emptySketch(), ids('a', EXACT_LIMIT + 1));
    expect(s.kind).toBe('hll');
    expect(Math.abs(countVisitors(s) - (EXACT_LIMIT + 1))).toBeLessThan(20);
  });

  it('unions exact sets exactly, whatever the size of the union', () => {
    const days = Array.from({ length: 30 }, (_, d) =>
      addVisitors(emptySketch(), [...ids(`d${d}`, 900), ...ids('loyal', 100)]),
    );
    const union = unionSketches(days);
    expect(union.kind).toBe('exact');
    expect(countVisitors(union)).toBe(30 * 900 + 100);
  });

  it('unions mixed sketches as HyperLogLog, and a union of disjoint halves estimates the whole', () => {
    const a = addVisitors(emptySketch(), ids('x', 50_000));
    const b = addVisitors(emptySketch(), ids('y', 50_000));
    const c = addVisitors(emptySketch(), ids('x', 10)); // exact, all already in a
    const estimate = countVisitors(unionSketches([a, b, c]));
    expect(Math.abs(estimate - 100_000) / 100_000).toBeLessThan(0.03);
  });

  it('has a relative error within 3 standard errors (0.81% each) across cardinalities, measured', () => {
    const errors: number[] = [];
    // 200,000 (the largest range) in the reliability suite only: 600,000 hashes.
    for (const n of [2_000, 10_000, 50_000, 200_000].filter((n) => n <= inputSize(50_000, 200_000))) {
      for (let trial = 0; trial < 3; trial++) {
        const estimate = countVisitors(addVisitors(emptySketch(), ids(`t${trial}n${n}`, n)));
        errors.push((estimate - n) / n);
      }
    }
    const rms = Math.sqrt(errors.reduce((s, e) => s + e * e, 0) / errors.length);
    expect(Math.max(...errors.map(Math.abs))).toBeLessThan(3 * 0.0081);
    expect(rms).toBeLessThan(0.015);
  });

  it('round-trips through its stored form', () => {
    const exact = addVisitors(emptySketch(), ['b', 'a']);
    expect(serializeSketch(exact)).toEqual({ ids: ['a', 'b'] });
    expect(countVisitors(deserializeSketch(serializeSketch(exact) as { ids: string[] }))).toBe(2);
    const hll = addVisitors(emptySketch(), ids('h', 5000));
    const back = deserializeSketch(serializeSketch(hll) as { hll: Uint8Array });
    expect(countVisitors(back)).toBe(countVisitors(hll));
    expect(countVisitors(deserializeSketch({}))).toBe(0);
  });
});

describe('visitor sketch: smaller sketches (goal visitors)', () => {
  it('turns into 2^precision registers past its own exact limit, within 3 standard errors', () => {
    const limits = { exact: 32, precision: 10 };
    expect(addVisitors(emptySketch(), ids('g', 32), limits).kind).toBe('exact');
    const s = addVisitors(emptySketch(), ids('g', 20_000), limits);
    expect(s.kind === 'hll' && s.registers.length).toBe(1024);
    expect(Math.abs(countVisitors(s) - 20_000) / 20_000).toBeLessThan(3 * 0.0325);
    const stored = serializeSketch(s);
    expect(countVisitors(deserializeSketch(stored as { hll: Uint8Array }))).toBe(countVisitors(s));
    const union = unionSketches([s, addVisitors(emptySketch(), ids('h', 5), limits)]);
    expect(union.kind === 'hll' && union.registers.length).toBe(1024);
  });

  it('refuses to union register sketches of different precisions', () => {
    const small = addVisitors(emptySketch(), ids('g', 100), { exact: 32, precision: 10 });
    const big = addVisitors(emptySketch(), ids('g', 2000));
    expect(() => unionSketches([small, big])).toThrow(/1024 and 16384/);
  });
});
