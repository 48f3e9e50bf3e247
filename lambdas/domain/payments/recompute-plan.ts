import type { Contribution } from './contribution.js';

/**
 * Which periods of the payment counters a change of the payment list rewrites, and what of them
 * (`docs/data-model.md`, "Payments: a list, and counters recomputed from it"). Counters are never
 * incremented: a day touched by a change is recomputed from its list items, then its month from
 * its days. `S` is the store's unit of a period's dimension counters (its slots); this module only
 * collects and merges them, so the layout stays with the store.
 */

/** Per site-local day (`YYYY-MM-DD`), the dimension slots to recompute; a month recomputes the union of its days'. */
export type DaySlots<S> = Map<string, Set<S>>;

/** Adds `slots` to `period`'s in `into` (the period joins with none when `slots` is empty). */
export function addSlots<S>(into: DaySlots<S>, period: string, slots: Iterable<S>): void {
  let held = into.get(period);
  if (!held) into.set(period, (held = new Set()));
  for (const s of slots) held.add(s);
}

/** The months (`YYYY-MM`) of `days`, each with the union of its days' slots: each month is recomputed once. */
export function monthsOf<S>(days: ReadonlyMap<string, ReadonlySet<S>>): DaySlots<S> {
  const months: DaySlots<S> = new Map();
  for (const [day, slots] of days) addSlots(months, day.slice(0, 7), slots);
  return months;
}

/** `days` (site-local `YYYY-MM-DD`, repeats allowed) by month, months oldest first, each month's days once in first-seen order. */
export function daysByMonth(days: Iterable<string>): Array<[month: string, days: string[]]> {
  const byMonth = new Map<string, string[]>();
  for (const day of new Set(days)) byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), day]);
  return [...byMonth].sort(([a], [b]) => a.localeCompare(b));
}

/**
 * What a day's dimension counters lost with a change of one list position: nothing (`none`), the
 * counters of one contribution (`of`), or unknown (`all`: a crash left it unsaid, so every slot).
 */
export type Lost = { kind: 'none' } | { kind: 'all' } | { kind: 'of'; c: Contribution };

const NOTHING: Lost = { kind: 'none' };
const UNKNOWN: Lost = { kind: 'all' };

/** A payment's main list item as stored: its revision, whether its recomputes may be unfinished, and the positions it left. */
export interface Listed {
  rev: number;
  c: Contribution;
  /** Set from the write of the item until its days were recomputed (a crash in between leaves it). */
  pending: boolean;
  /** Positions (`positionId`) the payment left that its last write had yet to remove. */
  stale: readonly string[];
}

/** What `planListing` decides for one payment's contribution. */
export type ListingPlan =
  | { write: false }
  | {
      write: true;
      /** Mark the main item `pending` (with `remove` as its `stale`) until the recomputes finished. */
      pending: boolean;
      /** Positions to delete, their days recomputed too. */
      remove: string[];
      /** What the position's day lost with the contribution replaced there. */
      lost: Lost;
    };

/**
 * Whether and how a contribution is written to its main list position (`docs/data-model.md`,
 * "Payments" steps 1 and 4):
 * - not when the stored revision is newer, nor when the same revision is stored, finished
 *   (no `pending`) and the payment left no position: a payment already in line costs one read;
 * - the positions to remove are those it left (`stale`) and those a crashed write left on the
 *   item, never one it holds now (`wanted`);
 * - a payment that moves to a new position (nothing stored there, positions left) keeps the
 *   positions it left on itself (its `unlisted`) and needs no `pending`: a retry finds them there
 *   and recomputes the new day from what it holds. A contribution replaced in place needs
 *   `pending`: after a crash only that says the replaced one's slots may not be recomputed yet;
 * - the day lost the replaced contribution's counters, or, when that one was itself `pending`
 *   (a crash), every slot's.
 *
 * @param stored the main item as read (consistently), undefined when absent
 * @param wanted the positions `c` occupies (`positionId`)
 * @param stale the positions the payment held before (its `unlisted`)
 */
export function planListing(
  stored: Listed | undefined,
  c: Pick<Contribution, 'rev'>,
  wanted: readonly string[],
  stale: readonly string[],
): ListingPlan {
  const held = new Set(wanted);
  const gone = [...new Set(stale)].filter((id) => !held.has(id));
  if (stored && stored.rev > c.rev) return { write: false };
  if (stored && stored.rev === c.rev && !stored.pending && gone.length === 0) return { write: false };
  const remove = [...new Set([...gone, ...(stored?.stale ?? [])])].filter((id) => !held.has(id));
  const moved = !stored && gone.length > 0;
  const lost: Lost = !stored ? NOTHING : stored.pending ? UNKNOWN : { kind: 'of', c: stored.c };
  return { write: true, pending: !moved, remove, lost };
}

/**
 * What a day lost with a list position deleted (`Payment.unlisted`): the contribution it held;
 * nothing for a refunded copy (its main item carries the counters); every slot when it was already
 * gone (a retry after a crash that deleted it cannot know which it held).
 *
 * @param old the deleted item's contribution, null for a copy without one; undefined when nothing was there
 */
export function lostWith(old: Contribution | null | undefined): Lost {
  if (old === undefined) return UNKNOWN;
  return old === null ? NOTHING : { kind: 'of', c: old };
}
