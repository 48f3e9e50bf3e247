import { PK, SK } from './table.js';
import { comparePositions, formatPosition, parsePosition, type LogPosition } from './rollup-log.js';
import type { RollupDelta, RollupMetric } from '../../domain/rollup.js';
import { COUNTS_PART } from './rollup-keys.js';
import { countsOf, mergeRollupItem } from './rollup-codec.js';
import { dict, parseDict } from '../../domain/dict.js';

/**
 * The fold of logged rollup deltas into a bucket's stored parts
 * (`docs/data-model.md`, "Rollups: a delta log, compacted"): pure, so the
 * compactor (`rollup-store.ts`) writes what it gives and the readers
 * (`rollup-reader.ts`) fold pending deltas the same way. It works on stored
 * attributes (`seq` positions, the `counts` of each part, `p`), which is why
 * it sits with the codec here and not in `lambdas/domain`.
 */

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

/** Whether two `seq` maps record the same positions. */
const sameMarks = (a: unknown, b: unknown) => {
  const x = (a ?? {}) as Record<string, string>;
  const y = (b ?? {}) as Record<string, string>;
  return Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => y[k] === v);
};

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
