import { describe, expect, it } from 'vitest';
import { NONE, PAYMENT_DIMENSIONS, bucketOf, type PaymentDimension } from '../../lambdas/domain/rollup.js';
import { BUCKETED_DIMENSIONS, bucketCount, type Contribution } from '../../lambdas/domain/payments/contribution.js';
import type { Lost } from '../../lambdas/domain/payments/recompute-plan.js';
import {
  ALL_SLOTS,
  GROUP_SLOT,
  slotsLost,
  slotsOf,
  type DimensionSlot,
} from '../../lambdas/adapters/dynamo/payments/dimension-slots.js';

/** A contribution credited to a visit with `values` per dimension (none given: `(none)`), or Unattributed (null). */
function credited(values: Partial<Record<PaymentDimension, string[]>> | null): Contribution {
  return {
    key: 'stripe:pi_1',
    rev: 1,
    ts: Date.parse('2026-05-01T10:00:00Z'),
    day: '2026-05-01',
    hour: '2026-05-01T10',
    cents: 1000,
    customer: 'c1',
    touch_day: values ? '2026-05-01' : null,
    failed: false,
    refunded: false,
    dims: values
      ? (Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, values[d] ?? [NONE]])) as Record<
          PaymentDimension,
          string[]
        >)
      : null,
  };
}

const bucket = (d: PaymentDimension, v: string) => `${d}#${bucketOf(d, v)}` as DimensionSlot;
// Two pages that fall in different buckets, and a third that shares the first one's.
const pages = Array.from({ length: 64 }, (_, i) => `/p/${i}`);
const [p0 = '', p1 = ''] = pages.filter(
  (p, i) => pages.findIndex((q) => bucketOf('page', q) === bucketOf('page', p)) === i,
);
const p0twin = pages.find((p) => p !== p0 && bucketOf('page', p) === bucketOf('page', p0)) ?? '';

describe('slotsOf: the slots a contribution counts in', () => {
  it.each([
    ['Unattributed: its group only', credited(null), [GROUP_SLOT]],
    ['every value (none): the group only', credited({}), [GROUP_SLOT]],
    ['one-bucket dimensions live in the group', credited({ channel: ['Search'], country: ['DE'] }), [GROUP_SLOT]],
    ['a bucketed value: the group and its bucket', credited({ page: [p0] }), [GROUP_SLOT, bucket('page', p0)]],
    ['values of two buckets: both', credited({ page: [p0, p1] }), [GROUP_SLOT, bucket('page', p0), bucket('page', p1)]],
    ['two values of one bucket: it once', credited({ page: [p0, p0twin] }), [GROUP_SLOT, bucket('page', p0)]],
    [
      'several dimensions',
      credited({ page: [p0], landing_page: [p0], goal: ['Signup'] }),
      [GROUP_SLOT, bucket('landing_page', p0), bucket('page', p0), bucket('goal', 'Signup')].sort(),
    ],
  ])('%s', (_, c, slots) => {
    expect([...slotsOf(c)].sort()).toEqual([...slots].sort());
  });

  it('the test pages cover two buckets and a shared one', () => {
    expect(bucketOf('page', p0)).not.toBe(bucketOf('page', p1));
    expect(p0twin).not.toBe('');
  });
});

describe('ALL_SLOTS: what a recompute that cannot tell writes', () => {
  it('is the group and every bucket of every bucketed dimension, once each', () => {
    const buckets = BUCKETED_DIMENSIONS.reduce((n, d) => n + bucketCount(d), 0);
    expect(ALL_SLOTS[0]).toBe(GROUP_SLOT);
    expect(new Set(ALL_SLOTS).size).toBe(1 + buckets);
    for (const d of BUCKETED_DIMENSIONS)
      for (let b = 0; b < bucketCount(d); b++) expect(ALL_SLOTS).toContain(`${d}#${b}`);
  });
});

describe('slotsLost: the slots of what a day lost', () => {
  const page = credited({ page: [p0] });
  it.each([
    ['nothing', { kind: 'none' }, []],
    ['a contribution: its slots', { kind: 'of', c: page }, [GROUP_SLOT, bucket('page', p0)]],
    ['unknown: every slot', { kind: 'all' }, ALL_SLOTS],
  ] as Array<[string, Lost, readonly DimensionSlot[]]>)('%s', (_, lost, slots) => {
    expect(slotsLost(lost)).toEqual(slots);
  });
});
