import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet } from './batch.js';
import type { Granularity, RollupDelta, RollupKey, RollupMetric } from '../../domain/rollup.js';
import { addVisitors, deserializeSketch, serializeSketch } from '../../domain/visitor-sketch.js';
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
  /** Visits per dimension value (`''` is `(none)`). */
  counts: Record<string, number>;
  ids?: string[];
  hll?: Uint8Array;
}

export function parseRollupItem(item: Record<string, unknown>): RollupItem {
  return {
    visits: Number(item.visits ?? 0),
    pageviews: Number(item.pageviews ?? 0),
    counts: item.counts ? (JSON.parse(String(item.counts)) as Record<string, number>) : {},
    ids: item.ids ? (JSON.parse(String(item.ids)) as string[]) : undefined,
    hll: item.hll instanceof Uint8Array ? item.hll : undefined,
  };
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
      const next = this.merge(item, delta);
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

  private merge(item: Record<string, unknown> | undefined, delta: RollupDelta): Record<string, unknown> {
    const current = item ? parseRollupItem(item) : { visits: 0, pageviews: 0, counts: {} as Record<string, number> };
    const out: Record<string, unknown> = {};
    if (delta.key.metric !== 'visits') {
      const counts = { ...current.counts };
      for (const [value, n] of delta.values) {
        const total = (counts[value] ?? 0) + n;
        if (total === 0) delete counts[value];
        else counts[value] = total;
      }
      out.counts = JSON.stringify(counts);
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
}
