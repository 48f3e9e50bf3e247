import { GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { batchWrite } from '../batch.js';
import { PARTITIONS } from '../items.js';
import { PK, SK } from '../table.js';
import type { Granularity, PaymentDimension } from '../../../domain/rollup.js';
import type { ValueCounters } from '../../../domain/payments/contribution.js';
import { packDimension, splitDimensionCounters, unpackDimension } from './payment-counter-codec.js';
import { ignoreCondition, queryBetween } from './payment-list-items.js';

/**
 * PAYMENT_DIMENSION, partition `PD#<site>#<dimension>` (`docs/data-model.md`, "Payments"): a
 * period's counters per value of the credited visit, one item per bucket (`D#<day>#<bucket>`,
 * `M#<month>#<bucket>`: `vz`, packed by `packDimension`; `src`, the recompute that wrote it; `p`,
 * its part count when its values take more than one item), and the parts beyond the first
 * (`<bucket sk>#<src, 10 digits>#<index, 3 digits>`). This module writes and reads one bucket
 * item with its parts; which buckets a period has, and its group, is `payment-list-dimensions.ts`.
 */
export const dimensionPk = (site: string, d: PaymentDimension) => PARTITIONS.paymentDimension.key(site, d);
const { PAYMENT_DIMENSION } = PARTITIONS.paymentDimension.items;
/** Sort key of part `index` (≥ 1) of a bucket `base` written by the recompute `src` (sorts right after `base`). */
const dimensionPartSk = PAYMENT_DIMENSION.forms.part;
const parsePartSk = (sk: string) => {
  const [, , , src, index] = sk.split('#');
  return { src: Number(src), index: Number(index) };
};

/** A bucket item as read, its parts merged in; `inline` when it is a group holding every dimension (`i`). */
export interface BucketItem {
  period: string;
  bucket: number;
  values: Record<string, ValueCounters>;
  inline: boolean;
}

/**
 * The bucket items of a partition's items in sort key order, each with the parts of the recompute
 * it names (`src`, `p`) merged in: parts of other recomputes (superseded, or left by a crash
 * between the writes) are skipped.
 */
export function assembleBuckets(items: ReadonlyArray<Record<string, unknown>>): BucketItem[] {
  const out: Array<BucketItem & { src: number; parts: number }> = [];
  for (const item of items) {
    const [, period = '', bucket, partSrc, index] = String(item[SK]).split('#');
    const values = unpackDimension(item);
    if (partSrc === undefined) {
      out.push({
        period,
        bucket: Number(bucket),
        values,
        inline: item.i !== undefined,
        src: Number(item.src),
        parts: Number(item.p ?? 1),
      });
      continue;
    }
    const owner = out.at(-1);
    if (
      owner &&
      owner.period === period &&
      owner.bucket === Number(bucket) &&
      Number(partSrc) === owner.src &&
      Number(index) < owner.parts
    )
      Object.assign(owner.values, values);
  }
  return out.map(({ period, bucket, values, inline }) => ({ period, bucket, values, inline }));
}

/** The PAYMENT_DIMENSION items of a site's namespace, one bucket item (and its parts) at a time. */
export class PaymentDimensionItems {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * Writes a recomputed bucket or group (sort key `base`, `<D|M>#<period>#<bucket>`; `marks`: a
   * group's `g`, `i`) as parts of at most `DIMENSION_PART_BYTES` (`splitDimensionCounters`): the
   * first in the bucket's item, which names its recompute (`src`) and part count (`p`), the others
   * in part items. Those are written first, under keys no other recompute uses, then the bucket's
   * item on the recompute guard (`writeGuarded`), so a reader that takes the parts its bucket item
   * names (`assembleBuckets`) always reads one recompute's whole result. Parts of older recomputes
   * are deleted once a newer bucket item is in; a recompute that lost the race deletes its own.
   * A crash between the writes leaves parts no bucket item names: readers skip them and the
   * bucket's next recompute that has or had parts deletes them. With `notInline`, the item is not
   * written over a group held inline (`PaymentDimensions.write`).
   * @returns false only when `notInline` stopped it (an item from a newer counter is no reason)
   */
  async write(
    pk: string,
    base: string,
    values: Record<string, ValueCounters>,
    src: number,
    marks: Record<string, number> = {},
    notInline = false,
  ): Promise<boolean> {
    const [first = {}, ...rest] = splitDimensionCounters(values);
    const parts = rest.map((v, i) => ({
      [PK]: pk,
      [SK]: dimensionPartSk(base, src, i + 1),
      type: 'PAYMENT_DIMENSION',
      ...packDimension(v),
      src,
    }));
    if (parts.length > 0)
      await batchWrite(
        this.conn,
        parts.map((Item) => ({ PutRequest: { Item } })),
      );
    let old: Record<string, unknown> | undefined;
    try {
      ({ Attributes: old } = await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...this.item(pk, base, first, marks), src, ...(parts.length > 0 ? { p: parts.length + 1 } : {}) },
          ConditionExpression: notInline
            ? `attribute_not_exists(${PK}) OR (src < :src AND attribute_not_exists(i))`
            : `attribute_not_exists(${PK}) OR src < :src`,
          ExpressionAttributeValues: { ':src': src },
          ReturnValues: 'ALL_OLD',
        }),
      ));
    } catch (error) {
      ignoreCondition(error);
      if (parts.length > 0)
        await batchWrite(
          this.conn,
          parts.map((p) => ({ DeleteRequest: { Key: { [PK]: p[PK], [SK]: p[SK] } } })),
        );
      if (!notInline) return true;
      // Lost to a newer recompute, or stopped by a group held inline (then older than this one).
      const { Item } = await this.conn.doc.send(
        new GetCommand({ TableName: this.conn.table, Key: { [PK]: pk, [SK]: base }, ConsistentRead: true }),
      );
      return Number(Item?.src ?? 0) >= src;
    }
    if (parts.length > 0 || Number(old?.p ?? 1) > 1) await this.dropParts(pk, base, src);
    return true;
  }

  /** A bucket item of one part holding `values` (`marks`: a group's `g`, `i`), without the `src` its write adds. */
  item(
    pk: string,
    base: string,
    values: Record<string, ValueCounters>,
    marks: Record<string, number> = {},
  ): Record<string, unknown> {
    return { [PK]: pk, [SK]: base, type: 'PAYMENT_DIMENSION', ...packDimension(values), ...marks };
  }

  /**
   * Deletes the parts in partition `pk` of the periods of `g` from `from` to `to` whose recompute is
   * at most `upTo`'s of their period (periods not in `upTo` are left alone): after bucket items
   * were put without a condition from counter `upTo` (`checkedBatchWrite`), no bucket item can name
   * those parts (a guarded write over them needs a newer counter), so they are stale. One paged Query.
   */
  async dropPartsUpTo(
    pk: string,
    g: Granularity,
    from: string,
    to: string,
    upTo: ReadonlyMap<string, number>,
  ): Promise<void> {
    const range = PAYMENT_DIMENSION.range;
    const stale = (await queryBetween(this.conn, pk, range.from(g, from), range.to(g, to), true))
      .map((item) => String(item[SK]))
      .filter((sk) => {
        const [, period = '', , partSrc] = sk.split('#');
        return partSrc !== undefined && Number(partSrc) <= (upTo.get(period) ?? -1);
      });
    if (stale.length > 0)
      await batchWrite(
        this.conn,
        stale.map((sk) => ({ DeleteRequest: { Key: { [PK]: pk, [SK]: sk } } })),
      );
  }

  /** Deletes a bucket's parts of recomputes older than `src` (superseded, or left by a crash). */
  private async dropParts(pk: string, base: string, src: number): Promise<void> {
    const stale: Array<Record<string, unknown>> = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': pk, ':p': PAYMENT_DIMENSION.range.parts(base) },
      ProjectionExpression: `${PK}, ${SK}`,
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? [])
        if (parsePartSk(String(item[SK])).src < src) stale.push({ [PK]: item[PK], [SK]: item[SK] });
    }
    if (stale.length > 0)
      await batchWrite(
        this.conn,
        stale.map((Key) => ({ DeleteRequest: { Key } })),
      );
  }

  /** The bucket items of partition `pk` over the periods `from` to `to` of `g`, oldest first (`assembleBuckets`). */
  async buckets(pk: string, g: Granularity, from: string, to: string, consistent: boolean): Promise<BucketItem[]> {
    const range = PAYMENT_DIMENSION.range;
    return assembleBuckets(await queryBetween(this.conn, pk, range.from(g, from), range.to(g, to), consistent));
  }
}
