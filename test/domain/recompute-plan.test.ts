import { describe, expect, it } from 'vitest';
import type { Contribution } from '../../lambdas/domain/payments/contribution.js';
import {
  daysByMonth,
  lostWith,
  monthsOf,
  planListing,
  type Listed,
  type ListingPlan,
} from '../../lambdas/domain/payments/recompute-plan.js';

/** A contribution of revision `rev` (only its revision matters to the plan). */
const contribution = (rev: number): Contribution => ({
  key: 'stripe:pi_1',
  rev,
  ts: Date.parse('2026-05-01T10:00:00Z'),
  day: '2026-05-01',
  hour: '2026-05-01T10',
  cents: 1000,
  customer: 'c1',
  touch_day: null,
  failed: false,
  refunded: false,
  dims: null,
});
const OLD = contribution(1);
const stored = (rev: number, pending: boolean, stale: string[] = []): Listed => ({ rev, c: OLD, pending, stale });
// `W`: the position the contribution occupies; `A`, `B`: positions the payment left.
const WANTED = ['W'];

describe('planListing: whether and how a contribution is written to its list position', () => {
  const CASES: Array<[string, Listed | undefined, number, string[], ListingPlan]> = [
    ['a new payment', undefined, 1, [], { write: true, pending: true, remove: [], lost: { kind: 'none' } }],
    [
      'a payment that moved: no pending, the positions it left removed',
      undefined,
      2,
      ['A', 'A', 'W'],
      { write: true, pending: false, remove: ['A'], lost: { kind: 'none' } },
    ],
    [
      'a stale list naming only the position it holds is no move',
      undefined,
      2,
      ['W'],
      { write: true, pending: true, remove: [], lost: { kind: 'none' } },
    ],
    ['a newer revision stored', stored(3, false), 2, ['A'], { write: false }],
    ['the same revision stored and finished: one read', stored(2, false), 2, [], { write: false }],
    [
      'the same revision stored but pending (a crash): every slot, its stale removed',
      stored(2, true, ['B']),
      2,
      [],
      { write: true, pending: true, remove: ['B'], lost: { kind: 'all' } },
    ],
    [
      'the same revision finished, a position left since',
      stored(2, false),
      2,
      ['A'],
      { write: true, pending: true, remove: ['A'], lost: { kind: 'of', c: OLD } },
    ],
    [
      'an older revision replaced in place: its counters lost',
      stored(1, false),
      2,
      [],
      { write: true, pending: true, remove: [], lost: { kind: 'of', c: OLD } },
    ],
    [
      "an older pending revision: both runs' stale positions, never the one held",
      stored(1, true, ['B', 'W']),
      2,
      ['A', 'B'],
      { write: true, pending: true, remove: ['A', 'B'], lost: { kind: 'all' } },
    ],
  ];

  it.each(CASES)('%s', (_, held, rev, stale, plan) => {
    expect(planListing(held, { rev }, WANTED, stale)).toEqual(plan);
  });
});

describe('lostWith: what a day lost with a deleted position', () => {
  it.each([
    ['the contribution it held', OLD, { kind: 'of', c: OLD }],
    ['nothing for a refunded copy', null, { kind: 'none' }],
    ['every slot when it was already gone', undefined, { kind: 'all' }],
  ] as const)('%s', (_, old, lost) => {
    expect(lostWith(old)).toEqual(lost);
  });
});

describe('which periods a change rewrites', () => {
  it.each([
    ['no days, no months', [], []],
    [
      "each month once, with the union of its days' slots",
      [
        ['2026-05-01', ['group']],
        ['2026-05-31', ['page#1', 'group']],
        ['2026-06-01', []],
      ],
      [
        ['2026-05', ['group', 'page#1']],
        ['2026-06', []],
      ],
    ],
  ] as Array<[string, Array<[string, string[]]>, Array<[string, string[]]>]>)('monthsOf: %s', (_, days, months) => {
    const plan = monthsOf(new Map(days.map(([d, s]) => [d, new Set(s)])));
    expect([...plan].map(([m, s]) => [m, [...s]])).toEqual(months);
  });

  it.each([
    ['none', [], []],
    [
      'months oldest first, each day once in first-seen order',
      ['2026-06-02', '2026-05-03', '2026-06-01', '2026-06-02', '2025-12-31'],
      [
        ['2025-12', ['2025-12-31']],
        ['2026-05', ['2026-05-03']],
        ['2026-06', ['2026-06-02', '2026-06-01']],
      ],
    ],
  ] as Array<[string, string[], Array<[string, string[]]>]>)('daysByMonth: %s', (_, days, byMonth) => {
    expect(daysByMonth(days)).toEqual(byMonth);
  });
});
