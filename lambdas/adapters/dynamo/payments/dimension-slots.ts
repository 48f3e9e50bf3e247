import { bucketOf, type PaymentDimension } from '../../../domain/rollup.js';
import { BUCKETED_DIMENSIONS, bucketCount, inGroup, type Contribution } from '../../../domain/payments/contribution.js';
import type { Lost } from '../../../domain/payments/recompute-plan.js';

/**
 * The storage slots of the PAYMENT_DIMENSION family (`docs/data-model.md`,
 * "The group"): what a recompute of a period writes, its group item and the
 * buckets of the bucketed dimensions. Storage layout, not a payment rule: the
 * rules it applies (`inGroup`, `bucketOf`) stay in the domain.
 */

/** A bucketed dimension's bucket of the payment rollups, `<dimension>#<bucket>`. */
export type DimensionBucket = `${PaymentDimension}#${number}`;
/** The group item of a period (`GroupRows`). */
export const GROUP_SLOT = 'group';
/** What a recompute of a period writes: its group, and buckets of bucketed dimensions. */
export type DimensionSlot = typeof GROUP_SLOT | DimensionBucket;

/** Every slot (a recompute that cannot tell which changed writes them all). */
export const ALL_SLOTS: readonly DimensionSlot[] = [
  GROUP_SLOT,
  ...BUCKETED_DIMENSIONS.flatMap((d) =>
    Array.from({ length: bucketCount(d) }, (_, b) => `${d}#${b}` as DimensionBucket),
  ),
];

/**
 * The slots a contribution's counters fall in: always the group (its
 * Unattributed row, its grouped dimensions' values and its `(none)`s; a
 * failed payment too, which counts nowhere: it costs the group item of its
 * day, never a value), and the bucket of each other value of its bucketed
 * dimensions.
 */
export function slotsOf(c: Contribution): DimensionSlot[] {
  const dims = c.dims;
  if (!dims) return [GROUP_SLOT];
  return [
    GROUP_SLOT,
    ...new Set(
      BUCKETED_DIMENSIONS.flatMap((d) =>
        (dims[d] ?? []).filter((v) => !inGroup(d, v)).map((v) => `${d}#${bucketOf(d, v)}` as DimensionBucket),
      ),
    ),
  ];
}

/** The slots of what a day lost (`Lost`): none, the lost contribution's, or every slot when unknown. */
export function slotsLost(lost: Lost): readonly DimensionSlot[] {
  if (lost.kind === 'all') return ALL_SLOTS;
  return lost.kind === 'of' ? slotsOf(lost.c) : [];
}
