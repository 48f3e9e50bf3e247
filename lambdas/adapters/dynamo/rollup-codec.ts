import { GOAL_VISITOR_LIMITS, goalKeySlot, type RollupDelta } from '../../domain/rollup.js';
import {
  addVisitors,
  countVisitors,
  deserializeSketch,
  emptySketch,
  serializeSketch,
  type VisitorSketch,
} from '../../domain/visitor-sketch.js';
import { packSketch, unpackSketch } from './sketch-codec.js';
import { dict, parseDict } from '../../domain/dict.js';

/**
 * The data attributes of a ROLLUP or ROLLUP_COUNTS item (`docs/data-model.md`,
 * item ROLLUP): how they are read, and what a delta added to them makes.
 * Keys, `type`, `seq` and `ver` are not theirs (`rollup-keys.ts`,
 * `rollup-fold.ts`).
 */

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
