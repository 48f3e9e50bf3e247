import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { bumpChangeCounter } from './change-counter.js';
import { PK, SK } from './table.js';
import { packCustomers, packDimension, unpackCustomers, unpackDimension } from './payments/payment-counter-codec.js';
import { ALL_SLOTS, GROUP_SLOT, slotsOf, type DimensionSlot } from './payments/dimension-slots.js';
import { BULK_CONCURRENCY, batchWrite } from './batch.js';
import { inParallel } from '../../domain/parallel.js';
import { PAYMENT_DIMENSIONS, type Granularity, type PaymentDimension } from '../../domain/rollup.js';
import {
  bucketRows,
  dayRows,
  groupOf,
  dimensionCounters,
  flattenGroup,
  isGrouped,
  mergeDimensionCounters,
  mergeGroups,
  unflattenGroup,
  type GroupRows,
  type ValueCounters,
  splitDimensionCounters,
  dayCustomers,
  dayTotals,
  mergeCustomers,
  monthTotals,
  type Contribution,
  type ListClass,
  type PeriodCustomers,
  type PeriodTotals,
} from '../../domain/payments/contribution.js';
import { PARTITIONS, periodSk } from './items.js';
import type { StoredPeriod } from '../../ports.js';

/**
 * PAYMENT_LIST, PAYMENT_TOTALS, PAYMENT_CUSTOMERS and PAYMENT_CHANGE items
 * (`docs/data-model.md`, "Payments"). Every key is built from the `site`
 * string the store is given (the site's namespace).
 *
 * - PAYMENT_LIST `PL#<site>#<YYYY-MM>` / `<A|U>#<day>#<ts 13>#<provider:id>`:
 *   one per listed payment (A attributed, U unattributed), holding its
 *   contribution; refunded payments also have a copy in `PLR#<site>#<YYYY-MM>`
 *   / `<day>#<ts 13>#<provider:id>` so the `refunded` filter reads only them.
 * - PAYMENT_TOTALS `PT#<site>` / `D#<day>`, `M#<month>`: counters.
 * - PAYMENT_CUSTOMERS `PU#<site>` / `D#<day>`, `M#<month>`: distinct payers.
 * - PAYMENT_DIMENSION `PD#<site>#<dimension>` / `D#<day>#<bucket>`,
 *   `M#<month>#<bucket>`: counted payments, net cents and payers per value of
 *   the credited visit. The one-bucket dimensions and the Unattributed row
 *   share one item per period, the group (`g` set), under the key of
 *   `channel`'s bucket 0.
 * - PAYMENT_CHANGE `PT#<site>` / `C#<day>`, `C#<month>`: a counter bumped after
 *   every change of the period's list items; a recompute writes its result
 *   only if no recompute that started later already wrote (`src`).
 */
export const listPk = (site: string, month: string) => PARTITIONS.paymentList.key(site, month);
export const refundedPk = (site: string, month: string) => PARTITIONS.paymentListRefunded.key(site, month);
export const totalsPk = (site: string) => PARTITIONS.paymentTotals.key(site);
export const customersPk = (site: string) => PARTITIONS.paymentCustomers.key(site);
export const dimensionPk = (site: string, d: PaymentDimension) => PARTITIONS.paymentDimension.key(site, d);
/** Where a period's group item lives (`channel`'s bucket 0, which it replaces). */
const groupPk = (site: string) => dimensionPk(site, 'channel');
const splitBucket = (db: Exclude<DimensionSlot, typeof GROUP_SLOT>): [PaymentDimension, number] => {
  const i = db.lastIndexOf('#');
  return [db.slice(0, i) as PaymentDimension, Number(db.slice(i + 1))];
};
const { PAYMENT_LIST } = PARTITIONS.paymentList.items;
const { PAYMENT_LIST_REFUNDED } = PARTITIONS.paymentListRefunded.items;
const { PAYMENT_TOTALS, PAYMENT_CHANGE } = PARTITIONS.paymentTotals.items;
const { PAYMENT_CUSTOMERS } = PARTITIONS.paymentCustomers.items;
const { PAYMENT_DIMENSION } = PARTITIONS.paymentDimension.items;
/** Sort key of part `index` (≥ 1) of a PAYMENT_DIMENSION bucket `base` written by the recompute `src` (sorts right after `base`). */
const dimensionPartSk = PAYMENT_DIMENSION.forms.part;
const parsePartSk = (sk: string) => {
  const [, , , src, index] = sk.split('#');
  return { src: Number(src), index: Number(index) };
};

/**
 * The partitions of a site's payment counters that do not depend on time:
 * PAYMENT_TOTALS and PAYMENT_CUSTOMERS, PAYMENT_DIMENSION per dimension, and
 * layout 1's PAYMENT_ROLLUP ones (nothing reads them; listed so a
 * retired generation leaves none). The list's month partitions are found
 * with `listPartitions`.
 */
export function counterPartitions(site: string): string[] {
  return [
    totalsPk(site),
    customersPk(site),
    ...PAYMENT_DIMENSIONS.map((d) => dimensionPk(site, d)),
    ...['totals', ...PAYMENT_DIMENSIONS].map((m) => PARTITIONS.paymentRollup.key(site, m)),
  ];
}

/** Where a contribution is listed: its main item and, when refunded, its copy. */
export function listKeys(
  site: string,
  c: Pick<Contribution, 'day' | 'ts' | 'key' | 'touch_day' | 'refunded'>,
): Array<{ pk: string; sk: string }> {
  const month = c.day.slice(0, 7);
  const keys = [{ pk: listPk(site, month), sk: PAYMENT_LIST.key(c.touch_day !== null, c.day, c.ts, c.key) }];
  if (c.refunded) keys.push({ pk: refundedPk(site, month), sk: PAYMENT_LIST_REFUNDED.key(c.day, c.ts, c.key) });
  return keys;
}

/** `pk|sk` of a list position, the form a payment keeps of positions to remove (`Payment.unlisted`). */
export const positionId = (k: { pk: string; sk: string }) => `${k.pk}|${k.sk}`;
const parsePosition = (id: string) => {
  const i = id.indexOf('|');
  return { pk: id.slice(0, i), sk: id.slice(i + 1) };
};
/** The local day a list position belongs to. */
const dayOfPosition = (k: { pk: string; sk: string }) =>
  k.pk.startsWith(PARTITIONS.paymentListRefunded.prefix) ? k.sk.slice(0, 10) : k.sk.slice(2, 12);

/** Every dimension slot: what a bulk recompute writes for each day and month. */
const ALL_SLOTS_SET: ReadonlySet<DimensionSlot> = new Set(ALL_SLOTS);

function toContribution(item: Record<string, unknown>): Contribution {
  return JSON.parse(String(item.c)) as Contribution;
}

/** The dimension slots to recompute per local day (a month recomputes the union of its days'). */
export type DaySlots = Map<string, Set<DimensionSlot>>;

/** Adds `slots` to `day`'s in `into`. */
function addSlots(into: DaySlots, day: string, slots: Iterable<DimensionSlot>): void {
  let held = into.get(day);
  if (!held) into.set(day, (held = new Set()));
  for (const s of slots) held.add(s);
}

/**
 * The recomputes that many syncs of one site leave to one pass
 * (`PaymentListStore.sync` with a batch, then `PaymentListStore.finish`):
 * per day, the union of the dimension slots its syncs touched (a day is not
 * recomputed for another day's payments' slots), the list items whose
 * `pending` to clear, and steps to run after (a payment forgetting the
 * positions it left). Reusable after `finish`.
 */
export class RecomputeBatch {
  site: string | null = null;
  readonly days: DaySlots = new Map();
  readonly settled: Array<{ key: { pk: string; sk: string }; rev: number }> = [];
  readonly after: Array<() => Promise<void>> = [];

  add(site: string, days: DaySlots, settled: { key: { pk: string; sk: string }; rev: number } | null): void {
    if (this.site !== null && this.site !== site)
      throw new Error(`a recompute batch is for one site: ${this.site}, not ${site}`);
    this.site = site;
    for (const [day, slots] of days) addSlots(this.days, day, slots);
    if (settled) this.settled.push(settled);
  }

  clear(): void {
    this.site = null;
    this.days.clear();
    this.settled.length = 0;
    this.after.length = 0;
  }
}

/** The store of the payment list and its period rollups. */
export class PaymentListStore {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * Brings the list and rollups in line with one payment: writes its list
   * items (if `c` is newer than what is stored), removes `stale` positions,
   * then recomputes every day and month it touched. The main list item
   * carries `pending` until the recomputes finished, so a retry after a crash
   * at any point finishes them; a payment already in line costs one read.
   *
   * With `batch`, the recomputes (and the removal of `pending`) are left to
   * `finish(batch)`, which does them once for every sync of the batch: the
   * sessionizer's re-credit settles a batch's payments first, then recomputes
   * the union of their days and months (`docs/data-model.md`, "Payments").
   * A crash before `finish` leaves `pending` on the list items, which the
   * retry's sync of the same payment finishes as after any crash.
   *
   * @param c the payment's contribution, or null when it has none (leaves the list)
   * @param stale positions (`positionId`) the payment held before and no longer holds
   * @returns whether anything was written
   */
  async sync(
    site: string,
    c: Contribution | null,
    stale: readonly string[],
    storedRev: () => Promise<number>,
    batch?: RecomputeBatch,
  ): Promise<boolean> {
    const keys = c ? listKeys(site, c) : [];
    const main = keys[0];
    const wanted = new Set(keys.map(positionId));
    const gone = [...new Set(stale)].filter((id) => !wanted.has(id));
    if (c && main) {
      const { Item } = await this.conn.doc.send(
        new GetCommand({ TableName: this.conn.table, Key: { [PK]: main.pk, [SK]: main.sk }, ConsistentRead: true }),
      );
      if (Item && Number(Item.rev) > c.rev) return false;
      const upToDate = Item && Number(Item.rev) === c.rev && !Item.pending && gone.length === 0;
      if (upToDate) return false;
      const all = [...new Set([...gone, ...((Item?.stale as string[] | undefined) ?? [])])].filter(
        (id) => !wanted.has(id),
      );
      // A payment that moves to a new position keeps the positions it left on itself (`stale`: its
      // `unlisted`) until their days are recomputed, and a retry recomputes the new position's day
      // from what it finds there: no `pending` to set and clear (the sessionizer's write budget, `docs/benchmarks.md` "Budgets"). A
      // contribution replaced in place needs `pending`: after a crash only that says the replaced
      // one's slots may not be recomputed yet.
      const moved = !Item && gone.length > 0 && all.length === gone.length;
      for (const [i, k] of keys.entries()) {
        const body =
          i === 0
            ? { c: JSON.stringify(c), ...(moved ? {} : { pending: 1, ...(all.length > 0 ? { stale: all } : {}) }) }
            : {};
        if (
          !(await this.putIfNotNewer(
            { [PK]: k.pk, [SK]: k.sk, type: i === 0 ? 'PAYMENT_LIST' : 'PAYMENT_LIST_REFUNDED', rev: c.rev, ...body },
            c.rev,
          ))
        )
          return false;
      }
      // The dimension slots of its day to recompute: those of the new and the replaced contribution
      // (same position, same day); after a crash (`pending`) the replaced one is gone, so every slot.
      const replaced = Item && !Item.pending ? slotsOf(toContribution(Item)) : Item ? ALL_SLOTS : [];
      const days: DaySlots = new Map([[c.day, new Set([...slotsOf(c), ...replaced])]]);
      if ((await storedRev()) > c.rev) {
        // A newer revision settled meanwhile and may have moved the payment: take back what this one
        // wrote (only if still ours) and recompute; the newer one's own sync places it.
        for (const k of keys)
          await this.conn.doc
            .send(
              new DeleteCommand({
                TableName: this.conn.table,
                Key: toKey(k),
                ConditionExpression: 'rev = :rev',
                ExpressionAttributeValues: { ':rev': c.rev },
              }),
            )
            .catch(ignoreCondition);
        await this.recompute(site, days);
        return true;
      }
      await this.removePositions(all, days);
      const settled = moved ? null : { key: main, rev: c.rev };
      if (batch) batch.add(site, days, settled);
      else {
        await this.recompute(site, days);
        if (settled) await this.clearPending(settled);
      }
      return true;
    }
    if (gone.length === 0) return false;
    const days: DaySlots = new Map();
    await this.removePositions(gone, days);
    if (batch) batch.add(site, days, null);
    else await this.recompute(site, days);
    return true;
  }

  /**
   * Does the recomputes a batch of syncs left (`sync` with `batch`): each
   * day once, then each month once, then removes the synced list items'
   * `pending` and `stale`, then runs the batch's `after` steps in order.
   */
  async finish(batch: RecomputeBatch): Promise<void> {
    if (batch.site !== null) await this.recompute(batch.site, batch.days);
    for (const settled of batch.settled) await this.clearPending(settled);
    for (const step of batch.after) await step();
    batch.clear();
  }

  /** Removes a synced list item's `pending` and `stale`, if it still holds the revision synced. */
  private async clearPending(settled: { key: { pk: string; sk: string }; rev: number }): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: toKey(settled.key),
          UpdateExpression: 'REMOVE pending, stale',
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': settled.rev },
        }),
      )
      .catch(ignoreCondition);
  }

  private async putIfNotNewer(item: Record<string, unknown>, rev: number): Promise<boolean> {
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: item,
          ConditionExpression: `attribute_not_exists(${PK}) OR rev <= :rev`,
          ExpressionAttributeValues: { ':rev': rev },
        }),
      );
      return true;
    } catch (error) {
      ignoreCondition(error);
      return false;
    }
  }

  /**
   * Deletes the `gone` positions; each position's day joins `days` with its
   * contribution's slots (every slot for a position already gone: a retry
   * after a crash that deleted it cannot know which it held; none for a
   * refunded copy, whose main item carries the counters).
   */
  private async removePositions(gone: readonly string[], days: DaySlots): Promise<void> {
    for (const id of gone) {
      const position = parsePosition(id);
      const { Attributes } = await this.conn.doc.send(
        new DeleteCommand({ TableName: this.conn.table, Key: toKey(position), ReturnValues: 'ALL_OLD' }),
      );
      addSlots(
        days,
        dayOfPosition(position),
        Attributes?.c ? slotsOf(toContribution(Attributes)) : Attributes ? [] : ALL_SLOTS,
      );
    }
  }

  /** Recomputes each day of `days` (totals, payers and its dimension slots), then each of their months (the union of its days' slots). */
  private async recompute(site: string, days: ReadonlyMap<string, ReadonlySet<DimensionSlot>>): Promise<void> {
    const months = new Map<string, Set<DimensionSlot>>();
    for (const [day, slots] of days) addSlots(months, day.slice(0, 7), slots);
    // Each day's and month's items are its own (their counter guards them): several at once, months after their days.
    await inParallel([...days.keys()].sort(), BULK_CONCURRENCY, (day) =>
      this.recomputeDay(site, day, days.get(day) ?? new Set()),
    );
    await inParallel([...months], BULK_CONCURRENCY, ([month, slots]) => this.recomputeMonth(site, month, slots));
  }

  /**
   * Loads many contributions at once (bench, migration, rebuild): writes
   * their list items with BatchWriteItem, then recomputes each day and month
   * they touch once. Only for payments no other writer is changing (the list
   * items are written unconditionally). `bulkWrite` then `bulkRecompute`.
   * @returns the BatchWriteItem calls made
   */
  async bulkLoad(site: string, contributions: readonly Contribution[]): Promise<number> {
    const days = new Set<string>();
    const calls = await this.bulkWrite(site, contributions, days);
    await this.bulkRecompute(site, days);
    return calls;
  }

  /**
   * The first half of a bulk load taken in chunks: writes the chunk's list
   * items (PAYMENT_LIST, PAYMENT_LIST_REFUNDED) with BatchWriteItem and adds
   * the local days they fall on to `days`. Nothing is recomputed: the days
   * read their list items back in `bulkRecompute`, once every chunk is in,
   * so chunk boundaries leave no trace in the items.
   * @returns the BatchWriteItem calls made
   */
  async bulkWrite(site: string, contributions: readonly Contribution[], days: Set<string>): Promise<number> {
    for (const c of contributions) days.add(c.day);
    return batchWrite(
      this.conn,
      contributions.flatMap((c) =>
        listKeys(site, c).map((k, i) => ({
          PutRequest: {
            Item: {
              [PK]: k.pk,
              [SK]: k.sk,
              type: i === 0 ? 'PAYMENT_LIST' : 'PAYMENT_LIST_REFUNDED',
              rev: c.rev,
              ...(i === 0 ? { c: JSON.stringify(c) } : {}),
            },
          },
        })),
      ),
      BULK_CONCURRENCY,
    );
  }

  /**
   * Part of a bulk load: deletes list positions (`positionId`) a payment
   * left (its `unlisted`) with BatchWriteItem and adds their local days to
   * `days`, which `bulkRecompute` then recomputes whole (every slot).
   */
  async bulkRemove(positions: readonly string[], days: Set<string>): Promise<void> {
    const keys = [...new Set(positions)].map(parsePosition);
    for (const k of keys) days.add(dayOfPosition(k));
    await batchWrite(
      this.conn,
      keys.map((k) => ({ DeleteRequest: { Key: toKey(k) } })),
      BULK_CONCURRENCY,
    );
  }

  /**
   * The second half of a bulk load: recomputes each of `days` (`YYYY-MM-DD`,
   * site-local) once, every dimension slot, then each of their months once.
   * A month's days are read together: their change counters bumped first,
   * then one paged Query of the month's list partition (instead of two per
   * day), so each day's result carries the guard `recomputeDay`'s would.
   * Memory: one month's list items at a time.
   */
  async bulkRecompute(site: string, days: Iterable<string>): Promise<void> {
    const byMonth = new Map<string, string[]>();
    for (const day of new Set(days)) byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), day]);
    for (const [month, monthDays] of [...byMonth].sort(([a], [b]) => a.localeCompare(b))) {
      const src = new Map<string, number>();
      await inParallel(monthDays, BULK_CONCURRENCY, async (day) => void src.set(day, await this.bump(site, day)));
      const listed = await this.monthContributions(site, month);
      await inParallel(monthDays.sort(), BULK_CONCURRENCY, (day) =>
        this.writeDay(site, day, src.get(day) ?? 0, listed.get(day) ?? [], ALL_SLOTS_SET),
      );
    }
    await inParallel([...byMonth.keys()], BULK_CONCURRENCY, (month) => this.recomputeMonth(site, month, ALL_SLOTS_SET));
  }

  /** Bumps a period's change counter and returns its new value (the recompute that follows owns it). */
  private async bump(site: string, period: string): Promise<number> {
    return bumpChangeCounter(this.conn, totalsPk(site), PAYMENT_CHANGE.key(period), 'PAYMENT_CHANGE');
  }

  /** The contributions listed on a local day (its A and U items), read consistently. */
  async dayContributions(site: string, day: string): Promise<Contribution[]> {
    const out: Contribution[] = [];
    for (const attributed of [true, false]) {
      const query = {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :day)`,
        ExpressionAttributeValues: {
          ':pk': listPk(site, day.slice(0, 7)),
          ':day': PAYMENT_LIST.range.from(attributed, day),
        },
        ConsistentRead: true,
      };
      for await (const page of paginateQuery({ client: this.conn.doc }, query))
        for (const item of page.Items ?? []) out.push(toContribution(item));
    }
    return out;
  }

  /**
   * The contributions listed in a month, by local day (read consistently,
   * one paged Query of the month's partition): each day's in the order of
   * `dayContributions` (its A items, then its U items, by sort key).
   */
  private async monthContributions(site: string, month: string): Promise<Map<string, Contribution[]>> {
    const out = new Map<string, Contribution[]>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': listPk(site, month) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) {
        const c = toContribution(item);
        const day = out.get(c.day);
        if (day) day.push(c);
        else out.set(c.day, [c]);
      }
    return out;
  }

  /**
   * Recomputes a day's totals, payers and the dimension `slots` from its
   * list items. The change counter is bumped before the Query, and each
   * result is written only over a result computed from an older counter, so
   * of two racing recomputes the one that saw more wins. The dimensions go
   * inline into the day's group while they fit one item (`writeDimensions`).
   */
  async recomputeDay(site: string, day: string, slots: ReadonlySet<DimensionSlot>): Promise<void> {
    const src = await this.bump(site, day);
    await this.writeDay(site, day, src, await this.dayContributions(site, day), slots);
  }

  /** Writes a day's totals, payers and dimension `slots` computed from `contributions`, read after the counter became `src`. */
  private async writeDay(
    site: string,
    day: string,
    src: number,
    contributions: readonly Contribution[],
    slots: ReadonlySet<DimensionSlot>,
  ): Promise<void> {
    await Promise.all([
      this.writePeriod(site, 'D', day, src, dayTotals(day, contributions), dayCustomers(contributions)),
      slots.size > 0
        ? this.writeDimensions(site, periodSk('D', day), src, dayRows(contributions), slots, async (d, b) =>
            dimensionCounters(contributions, d, b),
          )
        : Promise.resolve(),
    ]);
  }

  /**
   * Recomputes a month's totals, payers and dimension `slots` from its days'
   * items (same guard as `recomputeDay`): the days' groups, and the buckets
   * of the days whose group does not hold them inline.
   */
  async recomputeMonth(site: string, month: string, slots: ReadonlySet<DimensionSlot>): Promise<void> {
    const src = await this.bump(site, month);
    const [from, to] = [`${month}-01`, `${month}-31`];
    const [totals, customers, days] = await Promise.all([
      this.periods(site, 'D', from, to, true),
      this.customers(site, 'D', from, to, true),
      slots.size > 0 ? this.groups(site, 'D', from, to, true) : Promise.resolve(new Map<string, PeriodGroup>()),
    ]);
    const writes: Array<Promise<void>> = [
      this.writePeriod(
        site,
        'M',
        month,
        src,
        monthTotals(
          month,
          totals.map((t) => t.totals),
        ),
        mergeCustomers(customers),
      ),
    ];
    if (slots.size > 0) {
      // Every day inline: the month's rows are their merge. Otherwise a bucket merges the inline days' rows and the other days' bucket items.
      const rows = [...days.values()].every((g) => g.inline) ? mergeGroups([...days.values()]) : null;
      const bucket = async (d: PaymentDimension, b: number) => {
        if (rows) return bucketRows(rows.dims[d] ?? {}, d, b);
        const items = await this.bucketItems(dimensionPk(site, d), 'D', from, to, true);
        return mergeDimensionCounters([
          ...[...days.values()].filter((g) => g.inline).map((g) => bucketRows(g.dims[d] ?? {}, d, b)),
          ...items.filter((i) => i.bucket === b && !days.get(i.period)?.inline).map((i) => i.values),
        ]);
      };
      writes.push(
        this.writeDimensions(
          site,
          periodSk('M', month),
          src,
          rows ?? mergeGroups([...days.values()].map(groupOf)),
          slots,
          bucket,
          rows === null,
        ),
      );
    }
    await Promise.all(writes);
  }

  /**
   * Writes a recomputed period's dimension counters (`base`: `<D|M>#<period>`).
   * `rows` holds every dimension (or, with `split`, only the group's part):
   * while it fits one item it goes inline into the period's group (`i`), and
   * readers ignore the period's buckets. Otherwise the `slots`' buckets
   * (`bucket` computes one) are written first, then the group without the
   * buckets' rows, on condition that the group it replaces is not inline:
   * buckets under an inline group are stale, so when that condition stops
   * it every bucket is written, then the group (`docs/data-model.md`, "The group").
   */
  private async writeDimensions(
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
      await this.writeDimension(groupPk(site), PAYMENT_DIMENSION.key(base, 0), all, src, { g: 1, i: 1 });
      return;
    }
    const group = flattenGroup(split ? rows : groupOf(rows));
    const writeBuckets = async (which: readonly DimensionSlot[]) => {
      await Promise.all(
        which
          .filter((slot) => slot !== GROUP_SLOT)
          .map(async (slot) => {
            const [d, b] = splitBucket(slot);
            await this.writeDimension(dimensionPk(site, d), PAYMENT_DIMENSION.key(base, b), await bucket(d, b), src);
          }),
      );
    };
    await writeBuckets([...slots]);
    if (await this.writeDimension(groupPk(site), PAYMENT_DIMENSION.key(base, 0), group, src, { g: 1 }, true)) return;
    // Not those written already: a second write from the same counter would lose its guard and delete its parts, which are the first's.
    await writeBuckets(ALL_SLOTS.filter((slot) => !slots.has(slot)));
    await this.writeDimension(groupPk(site), PAYMENT_DIMENSION.key(base, 0), group, src, { g: 1 });
  }

  /** Puts a recomputed item unless one computed from a newer change counter is there. */
  private async writeGuarded(item: Record<string, unknown>, src: number): Promise<void> {
    await this.conn.doc
      .send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...item, src },
          ConditionExpression: `attribute_not_exists(${PK}) OR src < :src`,
          ExpressionAttributeValues: { ':src': src },
        }),
      )
      .catch(ignoreCondition);
  }

  /**
   * Writes a recomputed dimension bucket or group (sort key `base`, `<D|M>#<period>#<bucket>`; `marks`: a group's `g`, `i`)
   * as parts of at most `DIMENSION_PART_BYTES` (`splitDimensionCounters`):
   * the first in the bucket's item, which names its recompute (`src`) and
   * part count (`p`), the others in items `<base>#<src, 10 digits>#<index, 3 digits>`.
   * Those are written first, under keys no other recompute uses, then the
   * bucket's item on the usual guard (`writeGuarded`), so a reader that takes
   * the parts its bucket item names (`dimension`) always reads one
   * recompute's whole result. Parts of older recomputes are deleted once a
   * newer bucket item is in; a recompute that lost the race deletes its own.
   * A crash between the writes leaves parts no bucket item names: readers
   * skip them and the bucket's next recompute that has or had parts deletes them.
   * With `notInline`, the item is not written over a group held inline (`writeDimensions`).
   * @returns false only when `notInline` stopped it (an item from a newer counter is no reason)
   */
  private async writeDimension(
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
          Item: {
            [PK]: pk,
            [SK]: base,
            type: 'PAYMENT_DIMENSION',
            ...packDimension(first),
            src,
            ...(parts.length > 0 ? { p: parts.length + 1 } : {}),
            ...marks,
          },
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

  private async writePeriod(
    site: string,
    g: Granularity,
    period: string,
    src: number,
    totals: PeriodTotals,
    customers: PeriodCustomers,
  ): Promise<void> {
    await Promise.all([
      this.writeGuarded(
        {
          [PK]: totalsPk(site),
          [SK]: PAYMENT_TOTALS.key(g, period),
          type: 'PAYMENT_TOTALS',
          t: JSON.stringify(totals),
        },
        src,
      ),
      this.writeGuarded(
        {
          [PK]: customersPk(site),
          [SK]: PAYMENT_CUSTOMERS.key(g, period),
          type: 'PAYMENT_CUSTOMERS',
          ...packCustomers(customers),
        },
        src,
      ),
    ]);
  }

  /**
   * A dimension's payment counters per value, by period and bucket, from
   * `from` to `to` (inclusive), the Unattributed row (`UNATTRIBUTED_KEY`)
   * included once per period: for a grouped dimension one entry per period
   * (its rows and the Unattributed row, from the group); for a bucketed one
   * its buckets' entries and one with the period's `(none)` and Unattributed
   * rows from the group.
   * Requests: one Query for a grouped dimension (the groups), two for a
   * bucketed one (the groups, then its items unless every period is inline).
   */
  async dimension(
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
    const own = await this.bucketItems(dimensionPk(site, d), g, from, to, consistent);
    return [
      ...own.flatMap(({ period, bucket, values }) => {
        return groups.get(period)?.inline ? [] : [{ period, bucket, values }];
      }),
      ...fromGroups,
    ];
  }

  /** Each period's group item from `from` to `to` (`unflattenGroup`), with whether it holds every dimension inline. */
  private async groups(
    site: string,
    g: Granularity,
    from: string,
    to: string,
    consistent: boolean,
  ): Promise<Map<string, PeriodGroup>> {
    const out = new Map<string, PeriodGroup>();
    for (const item of await this.bucketItems(groupPk(site), g, from, to, consistent))
      out.set(item.period, { ...unflattenGroup(item.values), inline: item.inline });
    return out;
  }

  /** The bucket items of one PAYMENT_DIMENSION partition from `from` to `to`, each with its parts merged in (`writeDimension`). */
  private async bucketItems(
    pk: string,
    g: Granularity,
    from: string,
    to: string,
    consistent: boolean,
  ): Promise<Array<{ period: string; bucket: number; values: Record<string, ValueCounters>; inline: boolean }>> {
    // A bucket's item, then its parts: only the parts of the recompute the item names count.
    const out: Array<{
      period: string;
      bucket: number;
      values: Record<string, ValueCounters>;
      inline: boolean;
      src: number;
      parts: number;
    }> = [];
    for (const item of await this.periodItems(pk, PAYMENT_DIMENSION.range, g, from, to, consistent)) {
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

  /** Period counters of `granularity` from `from` to `to` (inclusive), oldest first. */
  async periods(site: string, g: Granularity, from: string, to: string, consistent = false): Promise<StoredPeriod[]> {
    return (await this.periodItems(totalsPk(site), PAYMENT_TOTALS.range, g, from, to, consistent)).map((item) => ({
      granularity: g,
      period: String(item[SK]).slice(2),
      totals: JSON.parse(String(item.t)) as PeriodTotals,
    }));
  }

  /** Period payers of `granularity` from `from` to `to` (inclusive), oldest first (`packCustomers`). */
  async customers(
    site: string,
    g: Granularity,
    from: string,
    to: string,
    consistent = false,
  ): Promise<PeriodCustomers[]> {
    return (await this.periodItems(customersPk(site), PAYMENT_CUSTOMERS.range, g, from, to, consistent)).map(
      unpackCustomers,
    );
  }

  /**
   * The items of a payment counter partition (PAYMENT_TOTALS, PAYMENT_CUSTOMERS,
   * PAYMENT_DIMENSION, by the item type's `range`) over the periods `from` to `to` of `g`, oldest first.
   */
  private periodItems(
    pk: string,
    range: typeof PAYMENT_TOTALS.range,
    g: Granularity,
    from: string,
    to: string,
    consistent: boolean,
  ) {
    return this.query(pk, range.from(g, from), range.to(g, to), consistent);
  }

  private async query(
    pk: string,
    from: string,
    to: string,
    consistent: boolean,
  ): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      ConsistentRead: consistent,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        out.push(item);
      }
    }
    return out;
  }

  /**
   * Listed payments of a class from local day `startDay` back to `fromDay`,
   * newest first (ties by key descending), skipping `offset` and returning at
   * most `limit` keys. One Query per month partition and source (`all` merges
   * the attributed and unattributed items), each reading at most
   * `offset + limit` keys; months are read newest first until the page is full.
   * @returns payment keys (`provider:id`)
   */
  async page(
    site: string,
    cls: ListClass,
    fromDay: string,
    startDay: string,
    offset: number,
    limit: number,
  ): Promise<string[]> {
    const rows: Array<{ ts: string; key: string }> = [];
    for (
      let month = startDay.slice(0, 7);
      month >= fromDay.slice(0, 7) && rows.length < offset + limit;
      month = previousMonth(month)
    ) {
      const lo = fromDay.slice(0, 7) === month ? fromDay : `${month}-01`;
      const hi = startDay.slice(0, 7) === month ? startDay : `${month}-31`;
      const want = offset + limit - rows.length;
      const listed = (attributed: boolean): [string, string, string] => [
        listPk(site, month),
        PAYMENT_LIST.range.from(attributed, lo),
        PAYMENT_LIST.range.to(attributed, hi),
      ];
      const sources: Record<ListClass, Array<[string, string, string]>> = {
        all: [listed(true), listed(false)],
        attributed: [listed(true)],
        unattributed: [listed(false)],
        refunded: [[refundedPk(site, month), PAYMENT_LIST_REFUNDED.range.from(lo), PAYMENT_LIST_REFUNDED.range.to(hi)]],
      };
      const read = await Promise.all(sources[cls].map(([pk, from, to]) => this.readKeys(pk, from, to, want)));
      const merged = read.flat().sort((a, b) => (a.ts === b.ts ? (a.key < b.key ? 1 : -1) : a.ts < b.ts ? 1 : -1));
      rows.push(...merged.slice(0, want));
    }
    return rows.slice(offset, offset + limit).map((r) => r.key);
  }

  /** Up to `want` list keys of one partition between two bounds (`<prefix><day>#`, `<prefix><day>#~`), newest first. */
  private async readKeys(
    pk: string,
    lo: string,
    hi: string,
    want: number,
  ): Promise<Array<{ ts: string; key: string }>> {
    const out: Array<{ ts: string; key: string }> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :lo AND :hi`,
          ExpressionAttributeValues: { ':pk': pk, ':lo': lo, ':hi': hi },
          ProjectionExpression: SK,
          ScanIndexForward: false,
          Limit: want - out.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of Items) {
        // <prefix><day>#<ts 13>#<provider:id>; the lower bound is `<prefix><day>#`.
        const rest = String(item[SK]).slice(lo.length);
        out.push({ ts: rest.slice(0, 13), key: rest.slice(14) });
      }
      start = LastEvaluatedKey;
    } while (start && out.length < want);
    return out;
  }

  /**
   * The list's partitions (PAYMENT_LIST and its refunded copies) of every
   * month that has a month counter: one Query of the month keys of
   * `PT#<site>`. For deleting a retired generation (`rebuild-store.ts`).
   */
  async listPartitions(site: string): Promise<string[]> {
    const months = (
      await this.query(totalsPk(site), PAYMENT_TOTALS.range.from('M', ''), PAYMENT_TOTALS.range.to('M', ''), true)
    ).map((item) => String(item[SK]).slice(2));
    return months.flatMap((m) => [listPk(site, m), refundedPk(site, m)]);
  }

  /** The first local day with a listed payment, or null. */
  async firstDay(site: string): Promise<string | null> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
        ExpressionAttributeValues: { ':pk': totalsPk(site), ':d': PAYMENT_TOTALS.range.granularity('D') },
        Limit: 1,
      }),
    );
    return Items[0] ? String(Items[0][SK]).slice(2) : null;
  }
}

const toKey = (k: { pk: string; sk: string }) => ({ [PK]: k.pk, [SK]: k.sk });

/** A period's group as read, `inline` when it holds every dimension. */
type PeriodGroup = GroupRows & { inline: boolean };

/** `YYYY-MM` of the month before. */
function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
}
