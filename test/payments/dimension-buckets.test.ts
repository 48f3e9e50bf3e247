import { describe, expect, it } from 'vitest';
import { bucketOf } from '../../lambdas/domain/rollup.js';
import type { ValueCounters } from '../../lambdas/domain/payments/contribution.js';
import { packDimension } from '../../lambdas/adapters/dynamo/payments/payment-counter-codec.js';
import {
  assembleBuckets,
  type BucketItem,
} from '../../lambdas/adapters/dynamo/payments/payment-list-dimension-items.js';
import { monthBucket, type PeriodGroup } from '../../lambdas/adapters/dynamo/payments/payment-list-dimensions.js';

/** A stored PAYMENT_DIMENSION item (`sk`, values, and its other attributes). */
const item = (sk: string, values: Record<string, ValueCounters>, extra: Record<string, unknown> = {}) => ({
  sk,
  ...packDimension(values),
  ...extra,
});
const row = (n: number): ValueCounters => [n, n * 100, n];
const SRC5 = '0000000005';
const SRC4 = '0000000004';

describe('assembleBuckets: a bucket item with the parts of the recompute it names', () => {
  const CASES: Array<[string, Array<Record<string, unknown>>, BucketItem[]]> = [
    [
      'a bucket of one item',
      [item('D#2026-05-01#0', { a: row(1) }, { src: 5 })],
      [{ period: '2026-05-01', bucket: 0, values: { a: row(1) }, inline: false }],
    ],
    [
      'a group held inline',
      [item('D#2026-05-01#0', { a: row(1) }, { src: 5, g: 1, i: 1 })],
      [{ period: '2026-05-01', bucket: 0, values: { a: row(1) }, inline: true }],
    ],
    [
      'its parts merged in; an older recompute’s part and one past its count skipped',
      [
        item('D#2026-05-01#1', { a: row(1) }, { src: 5, p: 2 }),
        item(`D#2026-05-01#1#${SRC4}#001`, { old: row(9) }, { src: 4 }),
        item(`D#2026-05-01#1#${SRC5}#001`, { b: row(2) }, { src: 5 }),
        item(`D#2026-05-01#1#${SRC5}#002`, { c: row(3) }, { src: 5 }),
      ],
      [{ period: '2026-05-01', bucket: 1, values: { a: row(1), b: row(2) }, inline: false }],
    ],
    [
      'a part of another period or bucket, or with no bucket item before it, counts nowhere',
      [
        item(`D#2026-05-01#0#${SRC5}#001`, { orphan: row(1) }, { src: 5 }),
        item('D#2026-05-01#1', { a: row(1) }, { src: 5, p: 2 }),
        item(`D#2026-05-01#2#${SRC5}#001`, { other: row(1) }, { src: 5 }),
        item('D#2026-05-02#1', { d: row(4) }, { src: 5 }),
      ],
      [
        { period: '2026-05-01', bucket: 1, values: { a: row(1) }, inline: false },
        { period: '2026-05-02', bucket: 1, values: { d: row(4) }, inline: false },
      ],
    ],
  ];

  it.each(CASES)('%s', (_, items, buckets) => {
    expect(assembleBuckets(items)).toEqual(buckets);
  });
});

describe("monthBucket: a month's bucket from its days", () => {
  const pages = Array.from({ length: 64 }, (_, i) => `/p/${i}`);
  const inBucket0 = pages.filter((p) => bucketOf('page', p) === 0);
  const [x = '', y = ''] = inBucket0;
  const other = pages.find((p) => bucketOf('page', p) !== 0) ?? '';
  const group = (inline: boolean, page: Record<string, ValueCounters>): PeriodGroup => ({
    dims: { page },
    unattributed: {},
    inline,
  });

  it.each([
    [
      "an inline day's rows of the bucket, not of another",
      [['2026-05-01', group(true, { [x]: row(1), [other]: row(5) })]],
      [],
      { [x]: row(1) },
    ],
    [
      "another day's bucket item, never an inline day's (stale) one, nor another bucket's",
      [
        ['2026-05-01', group(true, { [x]: row(1) })],
        ['2026-05-02', group(false, {})],
      ],
      [
        { period: '2026-05-01', bucket: 0, values: { [x]: row(7) }, inline: false },
        { period: '2026-05-02', bucket: 0, values: { [x]: row(2), [y]: row(3) }, inline: false },
        { period: '2026-05-02', bucket: 1, values: { [other]: row(4) }, inline: false },
      ],
      { [x]: [3, 300, 3], [y]: row(3) },
    ],
  ] as Array<[string, Array<[string, PeriodGroup]>, BucketItem[], Record<string, ValueCounters>]>)(
    '%s',
    (_, days, items, values) => {
      expect(monthBucket(new Map(days), items, 'page', 0)).toEqual(values);
    },
  );

  it('the test pages fall in bucket 0 twice and elsewhere once', () => {
    expect([x, y, other].every((p) => p !== '')).toBe(true);
  });
});
