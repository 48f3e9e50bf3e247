import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchGet, batchWrite } from './batch.js';
import { deltaSk, encodeDeltaParts, rollupLogPk, shardStateSk } from './rollup-log.js';
import type { RollupDelta, RollupKey } from '../../domain/rollup.js';
import type { RollupStore, StreamCheckpoint } from '../../ports.js';
import { COUNTS_PART, partSk, partType, rollupPk } from './rollup-keys.js';
import { foldGroup, type LoggedDelta } from './rollup-fold.js';
import { readPendingParts } from './rollup-reader.js';

const bucketId = (k: RollupKey) => `${k.metric}|${k.granularity}|${k.period}|${k.bucket}`;
const keyOf = (k: RollupKey, part = 0) => ({ [PK]: rollupPk(k.site, k.metric), [SK]: partSk(k, part) });

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
