import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet, batchWrite } from './batch.js';
import { comparePositions, decodeDeltaPart, deltaSk, encodeDeltaParts, formatPosition, parseDeltaSk, parsePosition, rollupLogPk, shardStateSk, type LogPosition, type PendingPart } from './rollup-log.js';
import { GOAL_VISITOR_LIMITS, goalKeySlot, type Granularity, type RollupDelta, type RollupKey, type RollupMetric } from '../../domain/rollup.js';
import { addVisitors, deserializeSketch, emptySketch, serializeSketch, type VisitorSketch } from '../../domain/visitor-sketch.js';
import type { RollupStore, StreamCheckpoint } from '../../ports.js';

/** Partition of one metric's rollups of a site; items sort by granularity, period and bucket. */
export const rollupPk = (site: string, metric: RollupMetric) => `R#${site}#${metric}`;
export const rollupSk = (granularity: Granularity, period: string, bucket: number) => `${granularity}#${period}#${bucket}`;
const keyOf = (k: RollupKey) => ({ [PK]: rollupPk(k.site, k.metric), [SK]: rollupSk(k.granularity, k.period, k.bucket) });


/** A rollup item as read from the table (`docs/data-model.md`, item ROLLUP). */
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
  const stored = item.vv ? (JSON.parse(String(item.vv)) as Record<string, StoredValueSketch>) : {};
  return {
    visits: Number(item.visits ?? 0),
    pageviews: Number(item.pageviews ?? 0),
    counters: item.n ? (JSON.parse(String(item.n)) as Record<string, number>) : {},
    counts: item.counts ? (JSON.parse(String(item.counts)) as Record<string, number>) : {},
    ids: item.ids ? (JSON.parse(String(item.ids)) as string[]) : undefined,
    hll: item.hll instanceof Uint8Array ? item.hll : undefined,
    valueSketches: Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, deserializeSketch(typeof v === 'string' ? { hll: Buffer.from(v, 'base64') } : { ids: v })])),
  };
}

/**
 * Adds counts into a stored map through `slot` (where each key's counts go).
 * Zero totals are dropped unless `keepZero` (goal items keep their keys).
 */
function addCounts(current: Record<string, number>, delta: ReadonlyMap<string, number>, slot: (key: string) => string, keepZero: boolean): Record<string, number> {
  const out = { ...current };
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
 * beyond `GOAL_KEYS_PER_ITEM` into the other-goals key (`goalKeySlot`).
 * Keys, `type`, `seq` and `ver` are the caller's. Exported so that a bulk
 * load (the report benchmark) writes items exactly as the sessionizer does.
 */
export function mergeRollupItem(item: Record<string, unknown> | undefined, delta: RollupDelta): Record<string, unknown> {
  const current: RollupItem = item ? parseRollupItem(item) : { visits: 0, pageviews: 0, counters: {}, counts: {}, valueSketches: {} };
  const out: Record<string, unknown> = {};
  const goal = delta.key.metric === 'goal';
  const slot = goal ? goalKeySlot(new Set([...Object.keys(current.counts), ...Object.keys(current.counters), ...Object.keys(current.valueSketches)])) : same;
  const counters = addCounts(current.counters, delta.counters, slot, goal);
  if (Object.keys(counters).length > 0) out.n = JSON.stringify(counters);
  if (delta.key.metric !== 'visits') {
    out.counts = JSON.stringify(addCounts(current.counts, delta.values, slot, goal));
    if (goal) {
      const sketches: Record<string, VisitorSketch> = { ...current.valueSketches };
      for (const [key, ids] of delta.valueVisitors) {
        const at = slot(key);
        sketches[at] = addVisitors(sketches[at] ?? emptySketch(), ids, GOAL_VISITOR_LIMITS);
      }
      const stored: Record<string, StoredValueSketch> = {};
      for (const [key, sketch] of Object.entries(sketches)) {
        const s = serializeSketch(sketch);
        stored[key] = 'ids' in s ? s.ids : Buffer.from(s.hll).toString('base64');
      }
      out.vv = JSON.stringify(stored);
    }
    return out;
  }
  out.visits = current.visits + delta.visits;
  out.pageviews = current.pageviews + delta.pageviews;
  const sketch = addVisitors(deserializeSketch({ ids: current.ids, hll: current.hll }), delta.visitors);
  const stored = serializeSketch(sketch);
  if ('ids' in stored) out.ids = JSON.stringify(stored.ids);
  else out.hll = stored.hll;
  return out;
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
export function foldDeltas(item: Record<string, unknown> | undefined, logged: readonly LoggedDelta[]): { attributes: Record<string, unknown>; seq: Record<string, string> } | null {
  const marks = (item?.seq ?? {}) as Record<string, string>;
  const seq = { ...marks };
  let merged = item;
  let applied = false;
  for (const { shard, position, delta } of logged) {
    const mark = marks[shard];
    // Compared with the marks the item had before this fold: pieces of one part share a position.
    if (mark !== undefined && comparePositions(position, parsePosition(mark)) <= 0) continue;
    merged = mergeRollupItem(merged, delta);
    seq[shard] = formatPosition(position);
    applied = true;
  }
  return applied && merged ? { attributes: merged, seq } : null;
}

/**
 * Reads the pending parts of a site's rollup delta log, in log order (by
 * shard, then position), at most `limit` items. Each part is returned with
 * its item key (for the compactor to delete it once folded).
 */
export async function readPendingParts(
  conn: DynamoConnection,
  site: string,
  options: { consistent?: boolean; limit?: number; cost?: { requests: number; bytes: number } } = {},
): Promise<Array<PendingPart & { key: Record<string, string> }>> {
  const out: Array<PendingPart & { key: Record<string, string> }> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await conn.doc.send(
      new QueryCommand({
        TableName: conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :l)`,
        ExpressionAttributeValues: { ':pk': rollupLogPk(site), ':l': 'L#' },
        ConsistentRead: options.consistent ?? false,
        ExclusiveStartKey: start,
        ...(options.limit !== undefined ? { Limit: options.limit - out.length } : {}),
      }),
    );
    if (options.cost) options.cost.requests++;
    for (const item of page.Items ?? []) {
      if (options.cost) options.cost.bytes += Buffer.byteLength(String(item[SK])) + (item.d instanceof Uint8Array ? item.d.length : 0);
      const sk = String(item[SK]);
      out.push({ ...parseDeltaSk(sk), deltas: decodeDeltaPart(site, item.d as Uint8Array), key: { [PK]: String(item[PK]), [SK]: sk } });
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
      const { Item: state } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: stateKey, ConsistentRead: true }));
      if (state && BigInt(String(state.last)) >= BigInt(checkpoint.sequence)) continue;
      const parts = encodeDeltaParts(list);
      // One by one, in order: the compactor folds a prefix of a shard's parts, never a later part before an earlier one.
      for (const [k, data] of parts.entries()) {
        this.calls.put++;
        await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: { [PK]: rollupLogPk(site), [SK]: deltaSk(checkpoint.shard, checkpoint.sequence, k), type: 'ROLLUP_DELTA', d: data } }));
      }
      this.calls.put++;
      await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: { ...stateKey, type: 'ROLLUP_LOG_STATE', last: checkpoint.sequence } }));
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
      const byItem = new Map<string, { key: Record<string, string>; logged: LoggedDelta[] }>();
      for (const part of pending) {
        for (const delta of part.deltas) {
          const key = keyOf(delta.key);
          const id = `${key[PK]}|${key[SK]}`;
          const entry = byItem.get(id) ?? { key, logged: [] as LoggedDelta[] };
          entry.logged.push({ shard: part.shard, position: part.position, delta });
          byItem.set(id, entry);
        }
      }
      const entries = [...byItem.values()];
      const current = new Map<string, Record<string, unknown>>();
      this.calls.batchGet += Math.ceil(entries.length / 100);
      for (const item of await batchGet(this.conn, entries.map((e) => e.key))) current.set(`${item[PK]}|${item[SK]}`, item);
      let next = 0;
      const worker = async () => {
        while (next < entries.length) {
          const { key, logged } = entries[next++] as { key: Record<string, string>; logged: LoggedDelta[] };
          if (await this.foldOne(key, logged, current.get(`${key[PK]}|${key[SK]}`))) done.items++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, entries.length) }, worker));
      this.calls.delete += await batchWrite(this.conn, pending.map((p) => ({ DeleteRequest: { Key: p.key } })));
      done.parts += pending.length;
      if (pending.length < maxParts) return done;
    }
  }

  private async foldOne(key: Record<string, string>, logged: readonly LoggedDelta[], read: Record<string, unknown> | undefined): Promise<boolean> {
    let item = read;
    for (let attempt = 0; attempt < 20; attempt++) {
      const folded = foldDeltas(item, logged);
      if (!folded) return false;
      const version = Number(item?.ver ?? 0);
      try {
        this.calls.put++;
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { ...key, ...folded.attributes, type: 'ROLLUP', seq: folded.seq, ver: version + 1 },
            ConditionExpression: item ? 'ver = :ver' : `attribute_not_exists(${PK})`,
            ExpressionAttributeValues: item ? { ':ver': version } : undefined,
          }),
        );
        return true;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        this.calls.conflicts++;
        this.calls.get++;
        item = (await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }))).Item;
      }
    }
    throw new Error(`rollup ${key[PK]} ${key[SK]}: too many concurrent updates`);
  }
}
