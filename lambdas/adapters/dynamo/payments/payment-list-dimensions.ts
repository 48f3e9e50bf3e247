import type { DynamoConnection } from '../client.js';
import { PARTITIONS, periodSk } from '../items.js';
import type { Granularity, PaymentDimension } from '../../../domain/rollup.js';
import {
  bucketRows,
  dayRows,
  dimensionCounters,
  groupOf,
  isGrouped,
  mergeDimensionCounters,
  mergeGroups,
  type Contribution,
  type GroupRows,
  type ValueCounters,
} from '../../../domain/payments/contribution.js';
import { ALL_SLOTS, GROUP_SLOT, type DimensionSlot } from './dimension-slots.js';
import { flattenGroup, splitDimensionCounters, unflattenGroup } from './payment-counter-codec.js';
import { PaymentDimensionItems, dimensionPk, type BucketItem } from './payment-list-dimension-items.js';

/**
 * A period's PAYMENT_DIMENSION counters as groups and buckets (`docs/data-model.md`, "The group"):
 * the one-bucket dimensions and the Unattributed row share one item per period, the group (`g`
 * set), under the key of `channel`'s bucket 0; while every dimension's rows fit one item the group
 * holds them all, inline (`i`), and the period's buckets are not read.
 */
const groupPk = (site: string) => dimensionPk(site, 'channel');
const { PAYMENT_DIMENSION } = PARTITIONS.paymentDimension.items;
const splitBucket = (db: Exclude<DimensionSlot, typeof GROUP_SLOT>): [PaymentDimension, number] => {
  const i = db.lastIndexOf('#');
  return [db.slice(0, i) as PaymentDimension, Number(db.slice(i + 1))];
};

/** A period's group as read, `inline` when it holds every dimension. */
export type PeriodGroup = GroupRows & { inline: boolean };

/**
 * A month's bucket `b` of `d` from its days (`days`: each day's group; `items`: the days' bucket
 * items of `d`): the inline days' rows of the bucket and the other days' bucket items, merged.
 */
export function monthBucket(
  days: ReadonlyMap<string, PeriodGroup>,
  items: readonly BucketItem[],
  d: PaymentDimension,
  b: number,
): Record<string, ValueCounters> {
  return mergeDimensionCounters([
    ...[...days.values()].filter((g) => g.inline).map((g) => bucketRows(g.dims[d] ?? {}, d, b)),
    ...items.filter((i) => i.bucket === b && !days.get(i.period)?.inline).map((i) => i.values),
  ]);
}

/** The PAYMENT_DIMENSION counters of a site's namespace, by period. */
export class PaymentDimensions {
  private readonly items: PaymentDimensionItems;

  constructor(conn: DynamoConnection) {
    this.items = new PaymentDimensionItems(conn);
  }

  /**
   * A dimension's payment counters per value, by period and bucket, from `from` to `to`
   * (inclusive), the Unattributed row (`UNATTRIBUTED_KEY`) included once per period: for a grouped
   * dimension one entry per period (its rows and the Unattributed row, from the group); for a
   * bucketed one its buckets' entries and one with the period's `(none)` and Unattributed rows
   * from the group.
   * Requests: one Query for a grouped dimension (the groups), two for a bucketed one (the groups,
   * then its items unless every period is inline).
   */
  async read(
    site: string,
    d: PaymentDimension,
    g: Granularity,
    from: string,
    to: string,
    consistent = false,
  ): Promise<Array<{ period: string; bucket: number; values: Record<string, ValueCounters> }>> {
    const groups = await this.groups(site, g, from, to, consistent);
    const fromGroups = [...groups]
      .map(([period, rows]) => ({ period, bucket: 0, values: { ...rows.dims[d], ...rows.unattributed } }))
      .filter((e) => Object.keys(e.values).length > 0);
    // A bucketed dimension's buckets, read only when some period does not hold them inline.
    if (isGrouped(d) || [...groups.values()].every((rows) => rows.inline)) return fromGroups;
    const own = await this.items.buckets(dimensionPk(site, d), g, from, to, consistent);
    return [
      ...own.flatMap(({ period, bucket, values }) => (groups.get(period)?.inline ? [] : [{ period, bucket, values }])),
      ...fromGroups,
    ];
  }

  /** Each period's group item from `from` to `to` (`unflattenGroup`), with whether it holds every dimension inline. */
  async groups(site: string, g: Granularity, from: string, to: string, consistent: boolean) {
    const out = new Map<string, PeriodGroup>();
    for (const item of await this.items.buckets(groupPk(site), g, from, to, consistent))
      out.set(item.period, { ...unflattenGroup(item.values), inline: item.inline });
    return out;
  }

  /**
   * A day's group holding every dimension inline (`g`, `i`), from its list items, without the `src`
   * its write adds; null when its rows need more than one item (then the day's write is `writeDay`'s).
   */
  inlineDay(site: string, day: string, contributions: readonly Contribution[]): Record<string, unknown> | null {
    const [one = {}, ...more] = splitDimensionCounters(flattenGroup(dayRows(contributions)));
    if (more.length > 0) return null;
    return this.items.item(groupPk(site), PAYMENT_DIMENSION.key(periodSk('D', day), 0), one, { g: 1, i: 1 });
  }

  /** Deletes the parts of the days' groups from recomputes at most `upTo`'s (`PaymentDimensionItems.dropPartsUpTo`). */
  dropDayPartsUpTo(site: string, from: string, to: string, upTo: ReadonlyMap<string, number>): Promise<void> {
    return this.items.dropPartsUpTo(groupPk(site), 'D', from, to, upTo);
  }

  /** Writes a day's dimension `slots` computed from its list items, read after its change counter became `src`. */
  writeDay(
    site: string,
    day: string,
    src: number,
    contributions: readonly Contribution[],
    slots: ReadonlySet<DimensionSlot>,
  ): Promise<void> {
    return this.write(site, periodSk('D', day), src, dayRows(contributions), slots, async (d, b) =>
      dimensionCounters(contributions, d, b),
    );
  }

  /**
   * Writes a month's dimension `slots` from its days (`days`: each day's group, read after the
   * month's change counter became `src`). Every day inline: the month's rows are their merge.
   * Otherwise a bucket merges the inline days' rows and the other days' bucket items (`monthBucket`).
   */
  writeMonth(
    site: string,
    month: string,
    src: number,
    days: ReadonlyMap<string, PeriodGroup>,
    slots: ReadonlySet<DimensionSlot>,
  ): Promise<void> {
    const [from, to] = [`${month}-01`, `${month}-31`];
    const rows = [...days.values()].every((g) => g.inline) ? mergeGroups([...days.values()]) : null;
    const bucket = async (d: PaymentDimension, b: number) => {
      if (rows) return bucketRows(rows.dims[d] ?? {}, d, b);
      return monthBucket(days, await this.items.buckets(dimensionPk(site, d), 'D', from, to, true), d, b);
    };
    const merged = rows ?? mergeGroups([...days.values()].map(groupOf));
    return this.write(site, periodSk('M', month), src, merged, slots, bucket, rows === null);
  }

  /**
   * Writes a recomputed period's dimension counters (`base`: `<D|M>#<period>`). `rows` holds every
   * dimension (or, with `split`, only the group's part): while it fits one item it goes inline into
   * the period's group (`i`), and readers ignore the period's buckets. Otherwise the `slots`'
   * buckets (`bucket` computes one) are written first, then the group without the buckets' rows,
   * on condition that the group it replaces is not inline: buckets under an inline group are
   * stale, so when that condition stops it every bucket is written, then the group.
   */
  private async write(
    site: string,
    base: string,
    src: number,
    rows: GroupRows,
    slots: ReadonlySet<DimensionSlot>,
    bucket: (d: PaymentDimension, b: number) => Promise<Record<string, ValueCounters>>,
    split = false,
  ): Promise<void> {
    const all = flattenGroup(rows);
    if (!split && splitDimensionCounters(all).length === 1) {
      await this.items.write(groupPk(site), PAYMENT_DIMENSION.key(base, 0), all, src, { g: 1, i: 1 });
      return;
    }
    const group = flattenGroup(split ? rows : groupOf(rows));
    const writeBuckets = async (which: readonly DimensionSlot[]) => {
      await Promise.all(
        which
          .filter((slot) => slot !== GROUP_SLOT)
          .map(async (slot) => {
            const [d, b] = splitBucket(slot);
            await this.items.write(dimensionPk(site, d), PAYMENT_DIMENSION.key(base, b), await bucket(d, b), src);
          }),
      );
    };
    await writeBuckets([...slots]);
    const groupSk = PAYMENT_DIMENSION.key(base, 0);
    if (await this.items.write(groupPk(site), groupSk, group, src, { g: 1 }, true)) return;
    // Not those written already: a second write from the same counter would lose its guard and delete its parts, which are the first's.
    await writeBuckets(ALL_SLOTS.filter((slot) => !slots.has(slot)));
    await this.items.write(groupPk(site), groupSk, group, src, { g: 1 });
  }
}
