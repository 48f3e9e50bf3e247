import { describe, expect, it } from 'vitest';
import { benchScale, partitionKind, selected } from '../../bench/reports.js';

describe('the report benchmark scale points (docs/benchmarks.md)', () => {
  it.each([
    [{}, 3_400_000, 20_000],
    [{ FOOTFALL_BENCH_PAYMENTS: '100000' }, 3_400_000, 100_000],
    [{ FOOTFALL_BENCH_PAYMENTS: '1000000', FOOTFALL_BENCH_EVENTS: '5000000' }, 5_000_000, 1_000_000],
    // The report budget's site (`docs/benchmarks.md` "Budgets"): 1M visits and 100,000 payments a month over 365 days.
    [{ FOOTFALL_BENCH_SITE: 'issue15' }, 28_424_037, 1_200_000],
  ])('%o is %i events and %i payments', (env, events, payments) => {
    const scale = benchScale(env);
    expect(scale.events).toBeCloseTo(events, -3);
    expect(scale.payments).toBe(payments);
  });

  it.each([{ FOOTFALL_BENCH_PAYMENTS: '50000' }, { FOOTFALL_BENCH_SITE: 'huge' }, { FOOTFALL_BENCH_EVENTS: 'many' }])(
    'refuses %o',
    (env) => {
      expect(() => benchScale(env)).toThrow(/FOOTFALL_BENCH_/);
    },
  );

  it.each([
    ['retention 12m', {}, true],
    ['retention 12m', { FOOTFALL_BENCH_REPORTS: 'retention,payments' }, true],
    ['payments 30d, page 2', { FOOTFALL_BENCH_REPORTS: 'retention, payments' }, true],
    ['overview 7d', { FOOTFALL_BENCH_REPORTS: 'retention,payments' }, false],
    ['duckdb', { FOOTFALL_BENCH_REPORTS: 'retention' }, false],
  ])('FOOTFALL_BENCH_REPORTS selects %s: %o → %s', (name, env, expected) => {
    expect(selected(name, env)).toBe(expected);
  });

  it.each([
    ['PD#shop.example#page', 'PD page'],
    ['PD#shop.example~2#channel', 'PD channel'],
    ['R#shop.example#visits', 'R visits'],
    ['R#shop.example#~log', 'R ~log'],
    ['PU#shop.example', 'PU'],
    ['SITES', 'SITES'],
  ])('splits bytes received by partition kind: %s is %s', (pk, kind) => {
    expect(partitionKind(pk)).toBe(kind);
  });
});
