import { QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { decodeDeltaPart, parseDeltaSk, rollupLogPk, type PendingPart } from './rollup-log.js';
import { rollupPk, rollupSk } from './rollup-keys.js';
import { countsOf, parseRollupItem, type RollupItem } from './rollup-codec.js';
import { foldDeltas, foldGroup, type LoggedDelta } from './rollup-fold.js';
import { batchGet } from './batch.js';
import type { Granularity, RollupMetric } from '../../domain/rollup.js';
import { dict } from '../../domain/dict.js';
import { PARTITIONS } from './items.js';
import type { VisitCountsRead } from '../../ports.js';

const { ROLLUP, ROLLUP_COUNTS } = PARTITIONS.rollup.items;

/**
 * Size of an item as DynamoDB counts it (attribute names plus values: UTF-8
 * strings, binary length, about 1 byte per 2 digits of a number; lists and maps
 * add 3 bytes plus their elements). Used to report bytes read per report.
 */
export function itemBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + itemBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + itemBytes(v) + 1, 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (n, [k, v]) => n + Buffer.byteLength(k) + itemBytes(v) + 1,
      0,
    )
  );
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

/** The items of partition `pk` with sort keys from `lower` to `upper` (one Query, paged at 1 MB), by sort key. */
async function queryRange(
  conn: DynamoConnection,
  pk: string,
  lower: string,
  upper: string,
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ':pk': pk, ':from': lower, ':to': upper },
  };
  for await (const page of paginateQuery({ client: conn.doc }, query)) {
    for (const item of page.Items ?? []) out.set(String(item[SK]), item);
  }
  return out;
}

/**
 * Reads a metric's rollup items of a site for periods `from`..`to` inclusive
 * (`YYYY-MM-DD` for days, `YYYY-MM` for months, `YYYY-MM-DDTHH` for hours),
 * all buckets, with one Query (paged at 1 MB), and folds in the site's
 * pending deltas (`docs/data-model.md`, "Rollups: a delta log, compacted"):
 * `pending` when the caller read them already (one Query per report, not per
 * metric), else read here. An item that only pending deltas touch is
 * returned too, so the answer is the same before and after compaction. A
 * dimension bucket's overflow parts are separate items of the answer (each
 * value is in one of them), folded as the compactor folds them (`foldGroup`).
 */
export async function readRollups(
  conn: DynamoConnection,
  site: string,
  metric: RollupMetric,
  granularity: Granularity,
  from: string,
  to: string,
  pending?: readonly PendingPart[],
): Promise<Array<RollupItem & { period: string }>> {
  const lower = ROLLUP.range.from(granularity, from);
  const upper = ROLLUP.range.to(granularity, to);
  const [stored, parts] = await Promise.all([
    queryRange(conn, rollupPk(site, metric), lower, upper),
    pending ?? readPendingParts(conn, site),
  ]);
  // Stored parts and pending deltas by bucket (`G#<period>#<bucket>`): a bucket's overflow parts fold together (`foldGroup`).
  const buckets = new Map<string, { parts: Array<Record<string, unknown> | undefined>; logged: LoggedDelta[] }>();
  const bucket = (base: string) => {
    let b = buckets.get(base);
    if (!b) buckets.set(base, (b = { parts: [], logged: [] }));
    return b;
  };
  for (const [sk, item] of stored) {
    const [g, period, b, part] = sk.split('#');
    bucket(`${g}#${period}#${b}`).parts[Number(part ?? 0)] = item;
  }
  for (const part of parts) {
    for (const delta of part.deltas) {
      if (delta.key.metric !== metric) continue;
      const sk = rollupSk(delta.key.granularity, delta.key.period, delta.key.bucket);
      if (sk < lower || sk > upper) continue;
      bucket(sk).logged.push({ shard: part.shard, position: part.position, delta });
    }
  }
  const items: Array<RollupItem & { period: string }> = [];
  for (const base of [...buckets.keys()].sort()) {
    const { parts: read, logged } = buckets.get(base) ?? { parts: [], logged: [] };
    const { folded } = logged.length > 0 ? foldGroup(read, logged) : { folded: [] };
    const period = base.split('#')[1] ?? '';
    // A `visits` bucket's part 1 is its ROLLUP_COUNTS item, outside this range (`readVisitCounts`).
    const parts = metric === 'visits' ? 1 : Math.max(read.length, folded.length);
    for (let i = 0; i < parts; i++) {
      const item = folded[i]?.attributes ?? read[i];
      if (!item) continue;
      const parsed = parseRollupItem(item);
      // A dimension value back at 0 stays in its item (`mergeRollupItem`), not in the answer.
      if (metric !== 'goal') parsed.counts = dict(Object.entries(parsed.counts).filter(([, n]) => n !== 0));
      items.push({ ...parsed, period });
    }
  }
  return items;
}

/**
 * Reads the `visits` counts of a site for periods `from`..`to` inclusive
 * (`readRollups`' periods) without their visitor sets: one Query of the
 * ROLLUP_COUNTS items (~200 B a period; `u` is the period's distinct
 * visitors), plus one BatchGet of the ROLLUP items (with their sets) of the
 * periods whose counts a pending delta is not in yet, folded as the
 * compactor folds them (`foldDeltas`, then `countsOf`), so the counts are
 * exact with deltas pending and after any crash of the compactor (every
 * `visits` bucket of a layout-3 generation has its counts item).
 * @param options.pending the site's pending log parts when the caller read them already (one Query per report), else read here
 */
export async function readVisitCounts(
  conn: DynamoConnection,
  site: string,
  granularity: Granularity,
  from: string,
  to: string,
  options: { pending?: readonly PendingPart[] } = {},
): Promise<VisitCountsRead[]> {
  const lower = ROLLUP.range.from(granularity, from);
  const upper = ROLLUP.range.to(granularity, to);
  const [read, parts] = await Promise.all([
    queryRange(
      conn,
      rollupPk(site, 'visits'),
      ROLLUP_COUNTS.range.from(granularity, from),
      ROLLUP_COUNTS.range.to(granularity, to),
    ),
    options.pending ?? readPendingParts(conn, site),
  ]);
  // Keyed by the bucket's ROLLUP sort key: a ROLLUP_COUNTS key is `C#` + it.
  const counts = new Map([...read].map(([sk, item]) => [sk.slice(2), item]));
  const logged = new Map<string, LoggedDelta[]>();
  for (const part of parts) {
    for (const delta of part.deltas) {
      if (delta.key.metric !== 'visits') continue;
      const sk = rollupSk(delta.key.granularity, delta.key.period, delta.key.bucket);
      if (sk < lower || sk > upper) continue;
      const list = logged.get(sk) ?? [];
      list.push({ shard: part.shard, position: part.position, delta });
      logged.set(sk, list);
    }
  }
  // Counts that a pending delta is not in: their ROLLUP items (sets included) are what to fold.
  const behind = [...logged.keys()].filter(
    (sk) => foldDeltas(counts.get(sk), logged.get(sk) ?? [], () => ({})) !== null,
  );
  const items = new Map<string, Record<string, unknown>>();
  if (behind.length > 0) {
    for (const item of await batchGet(
      conn,
      behind.map((sk) => ({ [PK]: rollupPk(site, 'visits'), [SK]: sk })),
    )) {
      items.set(String(item[SK]), item);
    }
  }
  const out: VisitCountsRead[] = [];
  for (const sk of [...new Set([...counts.keys(), ...behind])].sort()) {
    const stored = items.get(sk);
    const current = behind.includes(sk)
      ? countsOf(foldDeltas(stored, logged.get(sk) ?? [])?.attributes ?? stored ?? {})
      : (counts.get(sk) ?? {});
    const parsed = parseRollupItem(current);
    out.push({
      period: sk.split('#')[1] ?? '',
      visits: parsed.visits,
      pageviews: parsed.pageviews,
      counters: parsed.counters,
      visitors: Number(current.u ?? 0),
    });
  }
  return out;
}
