import type { TrackedEvent } from './tracked-event.js';
import type { Visit } from './visit.js';
import { dict, type Dict } from './dict.js';

/**
 * Realtime ("current visitors", `docs/api.md` "Realtime"): the
 * sessionizer writes, per batch, one small item per site and UTC minute of
 * the batch's recent events; the report reads the items of the last minutes
 * and keeps the visitors whose last event is within `REALTIME_WINDOW_MS`.
 */

/** A visitor is current while their last event is at most 5 minutes old (Plausible's "Current visitors"). */
export const REALTIME_WINDOW_MS = 5 * 60_000;
/** Events older than this when their batch is sessionized are not recorded (an import or a replay of history writes nothing). */
export const REALTIME_RECORD_MS = 10 * 60_000;
/** Realtime items expire (DynamoDB TTL) this long after their minute. */
export const REALTIME_TTL_MS = 60 * 60_000;

/**
 * What one batch saw of one visitor in one minute: last event time (ms), the
 * visit's referrer host, the paths viewed, the goals completed (absent when
 * the visitor completed none, which keeps the common entry short).
 */
export type RealtimeVisitor = [lastTs: number, referrer: string | null, paths: string[], goals?: string[]];

/** One site-minute of one batch: the UTC minute (`YYYY-MM-DDTHH:MM`) and its visitors by id (a dict: ids are visitor text). */
export interface RealtimeSlice {
  site: string;
  minute: string;
  visitors: Dict<RealtimeVisitor>;
}

/** The UTC minute of a time, `YYYY-MM-DDTHH:MM`. */
export const minuteOf = (tsMs: number): string => new Date(tsMs).toISOString().slice(0, 16);

/**
 * The realtime slices of a batch: for each event at most `REALTIME_RECORD_MS`
 * old at `now`, its visitor under the event's site and minute, with the
 * referrer host of the visit the event belongs to (`visits`, the visits the
 * batch wrote), the path of each page view and the name of each goal. Events of no written visit (a
 * replay that changed nothing) were recorded the first time and are skipped.
 */
export function realtimeSlices(
  batches: ReadonlyArray<{ site: string; events: readonly TrackedEvent[]; visits: readonly Visit[] }>,
  now: number,
): RealtimeSlice[] {
  const slices = new Map<string, RealtimeSlice>();
  for (const { site, events, visits } of batches) {
    const visitOf = new Map<string, Visit>();
    for (const v of visits) for (const e of v.events) visitOf.set(e.id, v);
    for (const e of events) {
      const visit = visitOf.get(e.event_id);
      if (!visit || e.ts < now - REALTIME_RECORD_MS) continue;
      const minute = minuteOf(e.ts);
      const id = `${site}|${minute}`;
      let slice = slices.get(id);
      if (!slice) slices.set(id, (slice = { site, minute, visitors: dict() }));
      const seen = slice.visitors[e.visitor_id];
      const entry: RealtimeVisitor = seen ?? [e.ts, visit.attrs.referrer_host, []];
      if (e.ts >= entry[0]) {
        entry[0] = e.ts;
        entry[1] = visit.attrs.referrer_host;
      }
      if (e.type === 'pageview' && !entry[2].includes(e.path)) entry[2].push(e.path);
      if (e.type === 'goal' && e.goal !== null && !(entry[3] ?? []).includes(e.goal))
        entry[3] = [...(entry[3] ?? []), e.goal];
      slice.visitors[e.visitor_id] = entry;
    }
  }
  return [...slices.values()];
}

/** The realtime report: current visitors, and their pages, referrers and goals by distinct visitors. */
export interface RealtimeReport {
  visitors: number;
  pages: Array<{ page: string; visitors: number }>;
  referrers: Array<{ referrer: string | null; visitors: number }>;
  goals: Array<{ goal: string; visitors: number }>;
}

/**
 * Current visitors at `now` from the slices of the last minutes: visitors
 * whose last event is in (`now` − 5 min, `now`]; pages they viewed, the
 * referrers of their visits and the goals they completed in that window
 * (Plausible's realtime goals), each counted once per visitor,
 * most visitors first (then name), at most `limit` rows each.
 */
export function realtimeReport(slices: readonly RealtimeSlice[], now: number, limit: number): RealtimeReport {
  const since = now - REALTIME_WINDOW_MS;
  const visitors = new Set<string>();
  const pages = new Map<string, Set<string>>();
  const referrers = new Map<string | null, Set<string>>();
  const goals = new Map<string, Set<string>>();
  const add = <K>(map: Map<K, Set<string>>, key: K, visitor: string) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(visitor);
  };
  for (const slice of slices) {
    for (const [visitor, [ts, referrer, paths, completed = []]] of Object.entries(slice.visitors)) {
      if (ts <= since || ts > now) continue;
      visitors.add(visitor);
      add(referrers, referrer, visitor);
      for (const path of paths) add(pages, path, visitor);
      for (const goal of completed) add(goals, goal, visitor);
    }
  }
  const rows = <K>(map: Map<K, Set<string>>) =>
    [...map]
      .map(([key, set]) => ({ key, visitors: set.size }))
      .sort((a, b) => b.visitors - a.visitors || String(a.key ?? '').localeCompare(String(b.key ?? '')))
      .slice(0, limit);
  return {
    visitors: visitors.size,
    pages: rows(pages).map((r) => ({ page: r.key, visitors: r.visitors })),
    referrers: rows(referrers).map((r) => ({ referrer: r.key, visitors: r.visitors })),
    goals: rows(goals).map((r) => ({ goal: r.key, visitors: r.visitors })),
  };
}
