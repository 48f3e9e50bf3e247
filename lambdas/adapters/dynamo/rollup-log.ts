import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Granularity, RollupDelta, RollupMetric } from '../../domain/rollup.js';
import { PARTITIONS } from './items.js';

/**
 * The rollup delta log (`docs/data-model.md`, "Rollups: a delta log,
 * compacted"): each sessionizer batch writes its whole contribution to a
 * site's rollups as ROLLUP_DELTA items in one partition, and a compactor folds
 * them into the ROLLUP items once per interval. This module is the log's
 * encoding and its order; `rollup-reader.ts` reads it, `rollup-store.ts` writes it.
 */

/** Partition of a site's pending rollup deltas and its per-shard log state (`~` sorts after every metric name). */
export const rollupLogPk = (site: string) => PARTITIONS.rollup.key(site, '~log');

/**
 * Sort key of part `part` of a batch's deltas: the shard's deltas sort by
 * sequence number (zero-padded to Kinesis' 129 digits), then part.
 */
export const deltaSk = PARTITIONS.rollup.items.ROLLUP_DELTA.key;
/** Sort key of a shard's log state: the last sequence number whose deltas are all written. */
export const shardStateSk = PARTITIONS.rollup.items.ROLLUP_LOG_STATE.key;

/**
 * Where a delta stands in its shard's order: a batch's last sequence number,
 * then the part of its deltas. A rollup item records, per shard, the position
 * of the last part folded into it (`seq`), as `<sequence>.<part>`.
 */
export interface LogPosition {
  sequence: bigint;
  part: number;
}

export const formatPosition = (p: LogPosition) => `${p.sequence}.${p.part}`;

/** A position as `formatPosition` stored it (`<sequence>.<part>`). */
export function parsePosition(stored: string): LogPosition {
  const [sequence = '0', part = '0'] = stored.split('.');
  return { sequence: BigInt(sequence), part: Number(part) };
}

/** -1, 0 or 1 as `a` is before, at or after `b`. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.sequence !== b.sequence) return a.sequence < b.sequence ? -1 : 1;
  return Math.sign(a.part - b.part);
}

/**
 * Most bytes of uncompressed JSON in one part. Compression only shrinks it, so
 * a ROLLUP_DELTA item stays under this (plus its key) whatever the batch: a
 * batch whose deltas are larger is written as several parts, in order.
 */
export const PART_BYTES = 256 * 1024;

/** One delta as stored: [metric, granularity, period, bucket, visits, pageviews, counters, values, visitors, valueVisitors]. */
type StoredDelta = [
  RollupMetric,
  Granularity,
  string,
  number,
  number,
  number,
  Array<[string, number]>,
  Array<[string, number]>,
  string[],
  Array<[string, string[]]>,
];

const byKey = <T>(entries: Iterable<[string, T]>): Array<[string, T]> =>
  [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
const keyOrder = (d: RollupDelta) =>
  `${d.key.metric}|${d.key.granularity}|${d.key.period}|${String(d.key.bucket).padStart(3, '0')}`;

/**
 * The stored form of one delta, cut into pieces of at most about `maxBytes`
 * of JSON each (the same key in every piece; counts and sets add, so the
 * pieces sum to the delta). Entries are sorted, so the same delta always
 * gives the same bytes.
 */
function storedPieces(d: RollupDelta, maxBytes: number): StoredDelta[] {
  const head = (): StoredDelta => [d.key.metric, d.key.granularity, d.key.period, d.key.bucket, 0, 0, [], [], [], []];
  const pieces: StoredDelta[] = [];
  let piece = head();
  piece[4] = d.visits;
  piece[5] = d.pageviews;
  let bytes = 100;
  const room = (size: number) => {
    if (bytes + size > maxBytes && bytes > 100) {
      pieces.push(piece);
      piece = head();
      bytes = 100;
    }
    bytes += size;
  };
  for (const [name, n] of byKey(d.counters)) {
    room(Buffer.byteLength(name) + 24);
    piece[6].push([name, n]);
  }
  for (const [value, n] of byKey(d.values)) {
    room(Buffer.byteLength(value) + 24);
    piece[7].push([value, n]);
  }
  for (const id of [...d.visitors].sort()) {
    room(Buffer.byteLength(id) + 4);
    piece[8].push(id);
  }
  for (const [value, ids] of byKey(d.valueVisitors)) {
    const sorted = [...ids].sort();
    room(Buffer.byteLength(value) + sorted.reduce((n, id) => n + Buffer.byteLength(id) + 4, 8));
    piece[9].push([value, sorted]);
  }
  pieces.push(piece);
  return pieces;
}

/**
 * A batch's deltas of one site as the parts of its log entry: deflated JSON,
 * each part at most `PART_BYTES` before compression. Deterministic: the same
 * deltas give the same bytes, so a retried batch writes identical items.
 */
export function encodeDeltaParts(deltas: readonly RollupDelta[]): Buffer[] {
  const parts: Buffer[] = [];
  let current: string[] = [];
  let bytes = 2;
  const flush = () => {
    if (current.length === 0) return;
    parts.push(deflateRawSync(Buffer.from(`[${current.join(',')}]`)));
    current = [];
    bytes = 2;
  };
  for (const d of [...deltas].sort((a, b) => (keyOrder(a) < keyOrder(b) ? -1 : 1))) {
    for (const piece of storedPieces(d, PART_BYTES / 2)) {
      const json = JSON.stringify(piece);
      const size = Buffer.byteLength(json) + 1;
      if (bytes + size > PART_BYTES) flush();
      current.push(json);
      bytes += size;
    }
  }
  flush();
  return parts;
}

/** The deltas of one part, for site `site` (the key's site is the partition's). */
export function decodeDeltaPart(site: string, data: Uint8Array): RollupDelta[] {
  const stored = JSON.parse(inflateRawSync(data).toString('utf8')) as StoredDelta[];
  return stored.map(
    ([metric, granularity, period, bucket, visits, pageviews, counters, values, visitors, valueVisitors]) => ({
      key: { site, metric, granularity, period, bucket },
      visits,
      pageviews,
      counters: new Map(counters),
      values: new Map(values),
      visitors: new Set(visitors),
      valueVisitors: new Map(valueVisitors.map(([value, ids]) => [value, new Set(ids)])),
    }),
  );
}

/** A pending part of the log as read: its shard, position and deltas. */
export interface PendingPart {
  shard: string;
  position: LogPosition;
  deltas: RollupDelta[];
}

/** Shard, sequence and part of a ROLLUP_DELTA item's sort key (`deltaSk`). */
export function parseDeltaSk(sk: string): { shard: string; position: LogPosition } {
  const parts = sk.split('#');
  const part = Number(parts.pop());
  const sequence = BigInt(parts.pop() ?? '0');
  return { shard: parts.slice(1).join('#'), position: { sequence, part } };
}
