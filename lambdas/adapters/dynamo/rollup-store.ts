import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet, batchWrite } from './batch.js';
import {
  comparePositions,
  decodeDeltaPart,
  deltaSk,
  encodeDeltaParts,
  formatPosition,
  parseDeltaSk,
  parsePosition,
  rollupLogPk,
  shardStateSk,
  type LogPosition,
  type PendingPart,
} from './rollup-log.js';
import {
  GOAL_VISITOR_LIMITS,
  goalKeySlot,
  type RollupDelta,
  type RollupKey,
  type RollupMetric,
} from '../../domain/rollup.js';
import {
  addVisitors,
  countVisitors,
  deserializeSketch,
  emptySketch,
  serializeSketch,
  type VisitorSketch,
} from '../../domain/visitor-sketch.js';
import type { RollupStore, StreamCheckpoint } from '../../ports.js';
import { packSketch, unpackSketch } from './sketch-codec.js';
import { PARTITIONS } from './items.js';
import { dict, parseDict } from '../../domain/dict.js';

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

const bucketId = (k: RollupKey) => `${k.metric}|${k.granularity}|${k.period}|${k.bucket}`;
const keyOf = (k: RollupKey, part = 0) => ({ [PK]: rollupPk(k.site, k.metric), [SK]: partSk(k, part) });

/**
 * Most bytes of a dimension rollup item's values, as `valueBytes` measures
 * them. Dimension values are free-form (pages, referrers, campaigns, keywords:
 * whatever the tracker is sent), so a bucket of a period can hold any number;
 * the compactor puts values that would take a bucket's last item past this
 * bound into a new overflow part (`foldGroup`). One value measures at most
 * ~12 KB (a 2,048-character path escaped as JSON), so a part always has room
 * for at least one, and an item stays under this plus its keys, `seq` and
 * `ver` (~33 KB with a few shards).
 */
export const ROLLUP_PART_BYTES = 32 * 1024;

/**
 * A value's room in a dimension item's `counts` JSON (`"value":count,`) with
 * the count given 10 digits, so the measure of an item depends only on which
 * values it holds, never on their counts: it never shrinks (values are never
 * removed from an item), which is what keeps a replayed fold placing values
 * where the first one did.
 */
export const valueBytes = (value: string) => Buffer.byteLength(JSON.stringify(value)) + 12;

/** Whether a metric's buckets are split into overflow parts: the dimensions (`visits` has no values; `goal` folds keys past 50 into the other-goals key). */
const splits = (metric: RollupMetric) => metric !== 'visits' && metric !== 'goal';

/** A rollup item as read from the table (`docs/data-model.md`, item ROLLUP); its maps are keyed by outside text, so they are dicts. */
export interface RollupItem {
  visits: number;
  pageviews: number;
  /** Named counts (`RollupDelta.counters`): `VISIT_COUNTERS` of `visits` items, completions per goal key of `goal` items. */
  counters: Record<string, number>;
  /** Visits per dimension value (`''` is `(none)`) or goal key. */
  counts: Record<string, number>;
  ids?: string[];
  hll?: Uint8Array;
  /** Visitors per value (`goal` items). */
  valueSketches: Record<string, VisitorSketch>;
}

/** Stored form of a value's sketch inside the `vv` JSON: its ids, or its registers in base64. */
type StoredValueSketch = string[] | string;

export function parseRollupItem(item: Record<string, unknown>): RollupItem {
  const stored = item.vv ? parseDict<StoredValueSketch>(String(item.vv)) : dict<StoredValueSketch>();
  // A `visits` item's visitor set, packed (`vz`).
  const packed = item.vz instanceof Uint8Array ? serializeSketch(unpackSketch(item.vz)) : null;
  return {
    visits: Number(item.visits ?? 0),
    pageviews: Number(item.pageviews ?? 0),
    counters: item.n ? parseDict<number>(String(item.n)) : dict<number>(),
    counts: item.counts ? parseDict<number>(String(item.counts)) : dict<number>(),
    ids: packed && 'ids' in packed ? packed.ids : undefined,
    hll: packed && 'hll' in packed ? packed.hll : undefined,
    valueSketches: dict(
      Object.entries(stored).map(([k, v]): [string, VisitorSketch] => [
        k,
        deserializeSketch(typeof v === 'string' ? { hll: Buffer.from(v, 'base64') } : { ids: v }),
      ]),
    ),
  };
}

const emptyItem = (): RollupItem => ({
  visits: 0,
  pageviews: 0,
  counters: dict(),
  counts: dict(),
  valueSketches: dict(),
});

/**
 * Adds counts into a stored map through `slot` (where each key's counts go).
 * Zero totals are dropped unless `keepZero` (value counts keep their keys).
 */
function addCounts(
  current: Record<string, number>,
  delta: ReadonlyMap<string, number>,
  slot: (key: string) => string,
  keepZero: boolean,
): Record<string, number> {
  const out = dict(current);
  for (const [key, n] of delta) {
    const at = slot(key);
    const total = (out[at] ?? 0) + n;
    if (total === 0 && !keepZero) delete out[at];
    else out[at] = total;
  }
  return out;
}

const same = (key: string) => key;

/**
 * The attributes of a rollup item after `delta` is added to `item` (or to an
 * empty item): every count adds, every visitor set is unioned into its
 * sketch, whatever the counter's name (`RollupDelta`). Goal items fold keys
 * beyond `GOAL_KEYS_PER_ITEM` into the other-goals key (`goalKeySlot`). A
 * value (or goal key) whose count falls to 0 stays in `counts` (reports skip
 * zero rows): an item's values only grow, which `foldGroup` relies on.
 * Keys, `type`, `seq` and `ver` are the caller's. A `visits` item's
 * visitor set is written packed (`vz`).
 */
export function mergeRollupItem(
  item: Record<string, unknown> | undefined,
  delta: RollupDelta,
): Record<string, unknown> {
  if (delta.key.metric === 'visits') return { ...mergeVisitCounts(item, delta), ...mergeVisitorSet(item, delta) };
  const current = item ? parseRollupItem(item) : emptyItem();
  const out = dict<unknown>();
  const goal = delta.key.metric === 'goal';
  const slot = goal
    ? goalKeySlot(
        new Set([
          ...Object.keys(current.counts),
          ...Object.keys(current.counters),
          ...Object.keys(current.valueSketches),
        ]),
      )
    : same;
  const counters = addCounts(current.counters, delta.counters, slot, goal);
  if (Object.keys(counters).length > 0) out.n = JSON.stringify(counters);
  // Values stay in their item at 0, so a value's every change lands where its first one did (`foldGroup`).
  out.counts = JSON.stringify(addCounts(current.counts, delta.values, slot, true));
  if (goal) {
    const sketches = dict(current.valueSketches);
    for (const [key, ids] of delta.valueVisitors) {
      const at = slot(key);
      sketches[at] = addVisitors(sketches[at] ?? emptySketch(), ids, GOAL_VISITOR_LIMITS);
    }
    const stored = dict<StoredValueSketch>();
    for (const [key, sketch] of Object.entries(sketches)) {
      const s = serializeSketch(sketch);
      stored[key] = 'ids' in s ? s.ids : Buffer.from(s.hll).toString('base64');
    }
    out.vv = JSON.stringify(stored);
  }
  return out;
}

/** A `visits` delta added to an item's counts (`visits`, `pageviews`, `n`). */
function mergeVisitCounts(item: Record<string, unknown> | undefined, delta: RollupDelta): Record<string, unknown> {
  const current = item ? parseRollupItem(item) : emptyItem();
  const counters = addCounts(current.counters, delta.counters, same, false);
  return {
    ...(Object.keys(counters).length > 0 ? { n: JSON.stringify(counters) } : {}),
    visits: current.visits + delta.visits,
    pageviews: current.pageviews + delta.pageviews,
  };
}

/**
 * A `visits` delta's visitors unioned into a visitor set, stored packed
 * (`vz`, `packSketch`: ≤ `EXACT_LIMIT` ids, then HyperLogLog registers,
 * deflated).
 */
function mergeVisitorSet(item: Record<string, unknown> | undefined, delta: RollupDelta): Record<string, unknown> {
  return { vz: packSketch(addVisitors(visitorSetOf(item), delta.visitors)) };
}

/** The visitor set an item holds (`vz`; an item without one is the empty set). */
export function visitorSetOf(item: Record<string, unknown> | undefined): VisitorSketch {
  return item?.vz instanceof Uint8Array ? unpackSketch(item.vz) : emptySketch();
}

/** Whether two `seq` maps record the same positions. */
const sameMarks = (a: unknown, b: unknown) => {
  const x = (a ?? {}) as Record<string, string>;
  const y = (b ?? {}) as Record<string, string>;
  return Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => y[k] === v);
};

/** The ROLLUP_COUNTS attributes of a `visits` ROLLUP item's data: its counts and `u`, its visitor set counted. */
export function countsOf(attributes: Record<string, unknown>): Record<string, unknown> {
  const { n, visits, pageviews } = attributes;
  return {
    ...(n !== undefined ? { n } : {}),
    visits: Number(visits ?? 0),
    pageviews: Number(pageviews ?? 0),
    u: countVisitors(visitorSetOf(attributes)),
  };
}

/**
 * Folds logged `visits` deltas into a bucket's two items: its ROLLUP item
 * (counts and visitor set, `mergeRollupItem`, skipping what its `seq`
 * covers) and its ROLLUP_COUNTS item, the projection of the ROLLUP item as
 * folded (`countsOf`) with the same `seq`. The ROLLUP item is written first
 * (part order), so a ROLLUP_COUNTS item never covers a delta the set lacks;
 * after a crash between the two writes, the retry finds the counts behind
 * (their `seq` differs) and writes them again, and a reader that finds
 * pending deltas past the counts' `seq` reads the ROLLUP item instead.
 * Pure: the compactor writes the result, readers fold pending deltas with it.
 * @returns [ROLLUP part, ROLLUP_COUNTS part], each null when unchanged
 */
export function foldVisits(
  item: Record<string, unknown> | undefined,
  counts: Record<string, unknown> | undefined,
  logged: readonly LoggedDelta[],
): FoldedPart[] {
  const folded = foldDeltas(item, logged);
  // Nothing new for the ROLLUP item (a retry after it was written): the counts may still be behind it.
  const base =
    folded ?? (item ? { attributes: dataOf(item), seq: { ...((item.seq ?? {}) as Record<string, string>) } } : null);
  if (!base) return [null, null];
  const current = counts !== undefined && counts.u !== undefined && sameMarks(counts.seq, base.seq);
  return [folded, current ? null : { attributes: countsOf(base.attributes), seq: { ...base.seq } }];
}

/** A delta read from the log, with where it stands in its shard's order. */
export interface LoggedDelta {
  shard: string;
  position: LogPosition;
  delta: RollupDelta;
}

/**
 * `item` (or an empty item) with every logged delta that it has not taken in
 * yet: a delta is skipped when its position is at or before the position
 * the item records for its shard (`seq`). Deltas must come in log order.
 * Pure; the compactor writes the result, readers only read it.
 * @returns the item's new data attributes (`mergeRollupItem`) and `seq`, or null when nothing was new
 */
export function foldDeltas(
  item: Record<string, unknown> | undefined,
  logged: readonly LoggedDelta[],
  merge: (item: Record<string, unknown> | undefined, delta: RollupDelta) => Record<string, unknown> = mergeRollupItem,
): { attributes: Record<string, unknown>; seq: Record<string, string> } | null {
  const marks = (item?.seq ?? {}) as Record<string, string>;
  const seq = { ...marks };
  let merged = item;
  let applied = false;
  for (const { shard, position, delta } of logged) {
    const mark = marks[shard];
    // Compared with the marks the item had before this fold: pieces of one part share a position.
    if (mark !== undefined && comparePositions(position, parsePosition(mark)) <= 0) continue;
    merged = merge(merged, delta);
    seq[shard] = formatPosition(position);
    applied = true;
  }
  return applied && merged ? { attributes: merged, seq } : null;
}

/** Attributes of a stored item that are not its data (`mergeRollupItem`'s output). */
const META = new Set<string>([PK, SK, 'type', 'seq', 'ver', 'p']);
const dataOf = (item: Record<string, unknown> | undefined) =>
  Object.fromEntries(Object.entries(item ?? {}).filter(([k]) => !META.has(k)));

/** One part of a bucket after a fold: what to write (null: unchanged). */
export type FoldedPart = { attributes: Record<string, unknown>; seq: Record<string, string> } | null;

/**
 * Folds logged deltas of one bucket of one period into its parts
 * (`parts[0]` the bucket's item, `parts[i]` overflow part i; undefined where
 * an item is not stored). Pure: the compactor writes the result, readers fold
 * pending deltas with it too, so both place values alike.
 *
 * Dimension buckets (`splits`): each value's counts go to the part that holds
 * it; a value no part holds goes to the last part while that part's values
 * measure at most `ROLLUP_PART_BYTES` (`valueBytes`) with it, else to a new
 * part after it (the count of parts is recorded on part 0 as `p`, so part 0 is
 * written whenever that count grows). Values are never removed from a part,
 * so a value stays where it first landed, in exactly one part. Each part
 * skips the deltas its own `seq` covers (`foldDeltas`).
 *
 * Exactly once across a crash between the parts' writes holds because a
 * fold's writes go in part order, part 0 first: a value whose counts a
 * written part took is found there again; one whose part was not written is
 * placed again in a part that was not written either (written parts before it
 * were too full for it then and only grew since; the last part is at least
 * the one it went to, as part 0 records the count). A `visits` bucket is
 * its ROLLUP item (part 0) and its ROLLUP_COUNTS item (part 1,
 * `foldVisits`); `goal` buckets are one item, folded as `foldDeltas` does.
 * Writers write the parts in part order, at `partSk`.
 *
 * @returns per part (index = part number) its new data and `seq`, or null if unchanged; `count`, the bucket's number of parts
 */
export function foldGroup(
  parts: ReadonlyArray<Record<string, unknown> | undefined>,
  logged: readonly LoggedDelta[],
): { folded: FoldedPart[]; count: number } {
  const metric = logged[0]?.delta.key.metric;
  if (metric === 'visits') return { folded: foldVisits(parts[0], parts[COUNTS_PART], logged), count: 1 };
  if (metric === undefined || !splits(metric))
    return { folded: [foldDeltas(parts[0], logged)], count: Math.max(1, parts.length) };
  const stored = Math.max(1, parts.length, Number(parts[0]?.p ?? 1));
  const owner = new Map<string, number>();
  const measure: number[] = [];
  for (let i = 0; i < stored; i++) {
    const counts = parts[i]?.counts ? parseDict<number>(String(parts[i]?.counts)) : dict<number>();
    measure[i] = 0;
    for (const value of Object.keys(counts)) {
      owner.set(value, i);
      measure[i] = (measure[i] ?? 0) + valueBytes(value);
    }
  }
  const place = (value: string): number => {
    const last = measure.length - 1;
    const room = valueBytes(value);
    const at =
      (measure[last] ?? 0) === 0 || (measure[last] ?? 0) + room <= ROLLUP_PART_BYTES ? last : measure.push(0) - 1;
    measure[at] = (measure[at] ?? 0) + room;
    owner.set(value, at);
    return at;
  };
  const routed: LoggedDelta[][] = [];
  for (const entry of logged) {
    const { delta } = entry;
    const byPart = new Map<number, Map<string, number>>();
    for (const value of [...delta.values.keys()].sort()) {
      const at = owner.get(value) ?? place(value);
      let values = byPart.get(at);
      if (!values) byPart.set(at, (values = new Map()));
      values.set(value, delta.values.get(value) ?? 0);
    }
    for (const [at, values] of byPart) (routed[at] ??= []).push({ ...entry, delta: { ...delta, values } });
  }
  const count = measure.length;
  const folded = Array.from({ length: count }, (_, i) => foldDeltas(parts[i], routed[i] ?? []));
  if (count > stored && !folded[0])
    folded[0] = { attributes: dataOf(parts[0]), seq: { ...((parts[0]?.seq ?? {}) as Record<string, string>) } };
  return { folded, count };
}

/**
 * Reads the pending parts of a site's rollup delta log, in log order (by
 * shard, then position), at most `limit` items. Each part is returned with
 * its item key (for the compactor to delete it once folded).
 */
export async function readPendingParts(
  conn: DynamoConnection,
  site: string,
  options: { consistent?: boolean; limit?: number } = {},
): Promise<Array<PendingPart & { key: Record<string, string> }>> {
  const out: Array<PendingPart & { key: Record<string, string> }> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await conn.doc.send(
      new QueryCommand({
        TableName: conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :l)`,
        ExpressionAttributeValues: { ':pk': rollupLogPk(site), ':l': PARTITIONS.rollup.items.ROLLUP_DELTA.range.all() },
        ConsistentRead: options.consistent ?? false,
        ExclusiveStartKey: start,
        ...(options.limit !== undefined ? { Limit: options.limit - out.length } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const sk = String(item[SK]);
      out.push({
        ...parseDeltaSk(sk),
        deltas: decodeDeltaPart(site, item.d as Uint8Array),
        key: { [PK]: String(item[PK]), [SK]: sk },
      });
    }
    start = page.LastEvaluatedKey;
  } while (start && (options.limit === undefined || out.length < options.limit));
  return out;
}

/**
 * Rollups in the single table (`docs/data-model.md`, "Rollups: a delta log,
 * compacted"). The sessionizer's `apply` writes a batch's deltas of a site as
 * one or a few ROLLUP_DELTA items, unless the site's log state says the
 * shard's batch was written already (a retried, duplicated or bisected
 * batch); `compact` folds the pending deltas into the ROLLUP items, each item
 * recording per shard the last log position it took in (`seq`) and a version
 * (`ver`) its write is conditioned on.
 */
export class DynamoRollupStore implements RollupStore {
  readonly calls = { get: 0, put: 0, query: 0, batchGet: 0, delete: 0, conflicts: 0 };

  constructor(
    private readonly conn: DynamoConnection,
    private readonly concurrency = 8,
  ) {}

  /**
   * Writes each site's deltas of the batch to its log, in order: the parts,
   * then the shard's log state (`last` = the batch's last sequence number).
   * A batch whose last sequence number is at or before `last` is skipped: its
   * deltas (or those of a longer batch that held its records) are written.
   * A crash before the state is written leaves the visits unwritten too, so
   * the retry computes and writes the same parts again.
   */
  async apply(deltas: readonly RollupDelta[], checkpoint: StreamCheckpoint): Promise<void> {
    const bySite = new Map<string, RollupDelta[]>();
    for (const d of deltas) {
      const list = bySite.get(d.key.site);
      if (list) list.push(d);
      else bySite.set(d.key.site, [d]);
    }
    for (const [site, list] of bySite) {
      const stateKey = { [PK]: rollupLogPk(site), [SK]: shardStateSk(checkpoint.shard) };
      this.calls.get++;
      const { Item: state } = await this.conn.doc.send(
        new GetCommand({ TableName: this.conn.table, Key: stateKey, ConsistentRead: true }),
      );
      if (state && BigInt(String(state.last)) >= BigInt(checkpoint.sequence)) continue;
      const parts = encodeDeltaParts(list);
      // One by one, in order: the compactor folds a prefix of a shard's parts, never a later part before an earlier one.
      for (const [k, data] of parts.entries()) {
        this.calls.put++;
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: {
              [PK]: rollupLogPk(site),
              [SK]: deltaSk(checkpoint.shard, checkpoint.sequence, k),
              type: 'ROLLUP_DELTA',
              d: data,
            },
          }),
        );
      }
      this.calls.put++;
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...stateKey, type: 'ROLLUP_LOG_STATE', last: checkpoint.sequence },
        }),
      );
    }
  }

  /**
   * Folds a site's pending deltas into its ROLLUP items, `maxParts` log items
   * at a time, then deletes the folded log items. Safe to run at any time and
   * concurrently with the sessionizer and with itself: a delta is taken in by
   * an item at most once (its `seq`), writes are conditioned on `ver`, and a
   * crash before the deletes only leaves parts that the next run skips.
   * @returns log items folded and ROLLUP items written
   */
  async compact(site: string, maxParts = 200): Promise<{ parts: number; items: number }> {
    const done = { parts: 0, items: 0 };
    for (;;) {
      this.calls.query++;
      const pending = await readPendingParts(this.conn, site, { consistent: true, limit: maxParts });
      if (pending.length === 0) return done;
      // Deltas by bucket (its item and overflow parts), in log order.
      const byBucket = new Map<string, { key: RollupKey; logged: LoggedDelta[] }>();
      for (const part of pending) {
        for (const delta of part.deltas) {
          const key = keyOf(delta.key);
          const id = `${key[PK]}|${key[SK]}`;
          const entry = byBucket.get(id) ?? { key: delta.key, logged: [] as LoggedDelta[] };
          entry.logged.push({ shard: part.shard, position: part.position, delta });
          byBucket.set(id, entry);
        }
      }
      const entries = [...byBucket.values()];
      const current = await this.readBuckets(entries.map((e) => e.key));
      let next = 0;
      const worker = async () => {
        while (next < entries.length) {
          const { key, logged } = entries[next++] as { key: RollupKey; logged: LoggedDelta[] };
          done.items += await this.foldBucket(key, logged, current.get(bucketId(key)) ?? []);
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, entries.length) }, worker));
      this.calls.delete += await batchWrite(
        this.conn,
        pending.map((p) => ({ DeleteRequest: { Key: p.key } })),
      );
      done.parts += pending.length;
      if (pending.length < maxParts) return done;
    }
  }

  /**
   * Every stored part of each bucket (consistent): one BatchGet of the
   * buckets' items, then one of the overflow parts their `p` names.
   * @returns the parts of each bucket by `bucketId`, index = part number
   */
  private async readBuckets(
    keys: readonly RollupKey[],
  ): Promise<Map<string, Array<Record<string, unknown> | undefined>>> {
    const out = new Map<string, Array<Record<string, unknown> | undefined>>();
    const bySk = new Map<string, { id: string; part: number }>();
    const get = async (wanted: Array<{ key: RollupKey; part: number }>) => {
      for (const { key, part } of wanted)
        bySk.set(`${keyOf(key, part)[PK]}|${keyOf(key, part)[SK]}`, { id: bucketId(key), part });
      this.calls.batchGet += Math.ceil(wanted.length / 100);
      for (const item of await batchGet(
        this.conn,
        wanted.map(({ key, part }) => keyOf(key, part)),
      )) {
        const at = bySk.get(`${item[PK]}|${item[SK]}`);
        if (!at) continue;
        const parts = out.get(at.id) ?? [];
        parts[at.part] = item;
        out.set(at.id, parts);
      }
    };
    // A `visits` bucket's ROLLUP_COUNTS item is read with its ROLLUP item (`foldVisits` folds both).
    await get(
      keys.flatMap((key) =>
        key.metric === 'visits'
          ? [
              { key, part: 0 },
              { key, part: COUNTS_PART },
            ]
          : [{ key, part: 0 }],
      ),
    );
    const overflow = keys.flatMap((key) =>
      Array.from({ length: Math.max(0, Number(out.get(bucketId(key))?.[0]?.p ?? 1) - 1) }, (_, i) => ({
        key,
        part: i + 1,
      })),
    );
    if (overflow.length > 0) await get(overflow);
    return out;
  }

  /**
   * Folds a bucket's logged deltas into its parts (`foldGroup`) and writes
   * the changed parts one by one in part order, each conditioned on its
   * `ver`. A conflict (another compactor wrote meanwhile) rereads the bucket
   * and folds again: parts written already skip what they took.
   * @returns parts written
   */
  private async foldBucket(
    key: RollupKey,
    logged: readonly LoggedDelta[],
    read: ReadonlyArray<Record<string, unknown> | undefined>,
  ): Promise<number> {
    let parts = read;
    let written = 0;
    for (let attempt = 0; attempt < 20; attempt++) {
      const { folded, count } = foldGroup(parts, logged);
      try {
        for (const [i, part] of folded.entries()) {
          if (!part) continue;
          const item = parts[i];
          const version = Number(item?.ver ?? 0);
          this.calls.put++;
          await this.conn.doc.send(
            new PutCommand({
              TableName: this.conn.table,
              Item: {
                ...keyOf(key, i),
                ...part.attributes,
                ...(i === 0 && count > 1 ? { p: count } : {}),
                type: partType(key.metric, i),
                seq: part.seq,
                ver: version + 1,
              },
              ConditionExpression: item ? 'ver = :ver' : `attribute_not_exists(${PK})`,
              ExpressionAttributeValues: item ? { ':ver': version } : undefined,
            }),
          );
          written++;
        }
        return written;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        this.calls.conflicts++;
        this.calls.get++;
        parts = (await this.readBuckets([key])).get(bucketId(key)) ?? [];
      }
    }
    throw new Error(`rollup ${keyOf(key)[PK]} ${keyOf(key)[SK]}: too many concurrent updates`);
  }
}
