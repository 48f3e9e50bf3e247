import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet } from './batch.js';
import { GOAL_VISITOR_LIMITS, goalKeySlot, type Granularity, type RollupDelta, type RollupKey, type RollupMetric } from '../../domain/rollup.js';
import { addVisitors, deserializeSketch, emptySketch, serializeSketch, type VisitorSketch } from '../../domain/visitor-sketch.js';
import type { RollupStore, StreamCheckpoint } from '../../ports.js';

/** Partition of one metric's rollups of a site; items sort by granularity, period and bucket. */
export const rollupPk = (site: string, metric: RollupMetric) => `R#${site}#${metric}`;
export const rollupSk = (granularity: Granularity, period: string, bucket: number) => `${granularity}#${period}#${bucket}`;
const keyOf = (k: RollupKey) => ({ [PK]: rollupPk(k.site, k.metric), [SK]: rollupSk(k.granularity, k.period, k.bucket) });

/** Kinesis sequence numbers are decimal strings of up to 128 digits; compare them as numbers. */
const seqValue = (s: string) => BigInt(s);

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

/**
 * Rollups in the single table, one item per site, metric, period and bucket.
 * Each delta is applied by read-modify-write: the item records, per shard, the
 * last batch it has taken in (`seq`) and a version (`ver`); the write is
 * conditioned on the version read, so two shards updating one day retry
 * instead of losing an update, and a batch already taken in is skipped.
 */
export class DynamoRollupStore implements RollupStore {
  readonly calls = { batchGet: 0, get: 0, put: 0, conflicts: 0 };

  constructor(
    private readonly conn: DynamoConnection,
    private readonly concurrency = 8,
  ) {}

  async apply(deltas: readonly RollupDelta[], checkpoint: StreamCheckpoint): Promise<void> {
    if (deltas.length === 0) return;
    const current = new Map<string, Record<string, unknown>>();
    this.calls.batchGet += Math.ceil(deltas.length / 100);
    for (const item of await batchGet(this.conn, deltas.map((d) => keyOf(d.key)))) current.set(`${item[PK]}|${item[SK]}`, item);
    let next = 0;
    const worker = async () => {
      while (next < deltas.length) {
        const delta = deltas[next++] as RollupDelta;
        const key = keyOf(delta.key);
        await this.applyOne(delta, key, current.get(`${key[PK]}|${key[SK]}`), checkpoint);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, deltas.length) }, worker));
  }

  private async applyOne(delta: RollupDelta, key: Record<string, string>, read: Record<string, unknown> | undefined, checkpoint: StreamCheckpoint): Promise<void> {
    let item = read;
    for (let attempt = 0; attempt < 20; attempt++) {
      const seq = (item?.seq ?? {}) as Record<string, string>;
      const applied = seq[checkpoint.shard];
      if (applied !== undefined && seqValue(applied) >= seqValue(checkpoint.sequence)) return;
      const next = mergeRollupItem(item, delta);
      const version = Number(item?.ver ?? 0);
      try {
        this.calls.put++;
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { ...key, ...next, type: 'ROLLUP', seq: { ...seq, [checkpoint.shard]: checkpoint.sequence }, ver: version + 1 },
            ConditionExpression: item ? 'ver = :ver' : `attribute_not_exists(${PK})`,
            ExpressionAttributeValues: item ? { ':ver': version } : undefined,
          }),
        );
        return;
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
