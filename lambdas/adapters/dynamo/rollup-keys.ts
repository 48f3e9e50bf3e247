import type { RollupKey, RollupMetric } from '../../domain/rollup.js';
import { PARTITIONS } from './items.js';

/**
 * Keys of the rollup items (`docs/data-model.md`, items ROLLUP and
 * ROLLUP_COUNTS), from the item registry: where each part of a bucket is.
 */

/** Partition of one metric's rollups of a site; items sort by granularity, period and bucket. */
export const rollupPk = (site: string, metric: RollupMetric) => PARTITIONS.rollup.key(site, metric);
/**
 * Sort key of a rollup item: part 0 of a bucket is `<granularity>#<period>#<bucket>`,
 * its overflow parts (dimension items, `foldGroup`) `…#<bucket>#<part, 3 digits>`,
 * which sort right after it and inside every range a reader queries.
 */
export const rollupSk = PARTITIONS.rollup.items.ROLLUP.key;
/**
 * Sort key of a `visits` bucket's ROLLUP_COUNTS item: its counts and its
 * distinct visitors `u`, without the visitor set, so that a time series
 * (one period per point) reads ~200 B a period, not the set of up to 16 KB
 * the bucket's ROLLUP item carries. `C#` sorts outside every `H#`, `D#` and
 * `M#` range the set readers query (`docs/data-model.md`, "Distinct visitors").
 */
export const countsSk = PARTITIONS.rollup.items.ROLLUP_COUNTS.key;

/** A `visits` bucket's parts as `foldGroup` numbers them: 0 its ROLLUP item (counts and visitor set), 1 its ROLLUP_COUNTS item. */
export const COUNTS_PART = 1;

/**
 * Sort key of part `part` of a bucket (`foldGroup`'s numbering): a `visits`
 * bucket's part 1 is its ROLLUP_COUNTS item, any other bucket's parts past 0
 * are overflow parts.
 */
export const partSk = (k: Pick<RollupKey, 'metric' | 'granularity' | 'period' | 'bucket'>, part: number) =>
  k.metric === 'visits' && part === COUNTS_PART
    ? countsSk(k.granularity, k.period, k.bucket)
    : rollupSk(k.granularity, k.period, k.bucket, part);

/** Item type of part `part` of a bucket of `metric` (`partSk`). */
export const partType = (metric: RollupMetric, part: number) =>
  metric === 'visits' && part === COUNTS_PART ? 'ROLLUP_COUNTS' : 'ROLLUP';
