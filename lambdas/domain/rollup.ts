import type { Visit } from './visit.js';
import { OUTBOUND_GOAL, pageviewsOf } from './visit.js';
import { addDays, dayStart, localDay, localHour } from './range.js';

/**
 * The 15 breakdown dimensions of `docs/api.md` "Breakdowns", in that order.
 * New dimensions are appended: lists of payment dimensions are built in this
 * order (`PAYMENT_DIMENSIONS`, the payment rollups' slots), so an existing
 * dimension keeps its place.
 */
export const DIMENSIONS = [
  'channel',
  'referrer',
  'campaign',
  'keyword',
  'landing_page',
  'page',
  'country',
  'device',
  'browser',
  'os',
  'language',
  'utm_source',
  'utm_medium',
  'utm_content',
  'exit_page',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/**
 * The value(s) a visit has for each dimension (`docs/api.md` "Breakdowns"). `null` is a
 * visit without a value (the `(none)` row). `page` lists every page viewed,
 * once per visit: the dimension counts visits that viewed the page.
 * `exit_page` is the path of the visit's last page view (null for a visit of
 * goals only): it changes as the visit grows, and a batch's deltas take the
 * replaced visit's exit page back (−1) and count the new one (+1).
 */
export const DIMENSION_VALUES: Readonly<Record<Dimension, (v: Visit) => ReadonlyArray<string | null>>> = {
  channel: (v) => [v.attrs.channel],
  referrer: (v) => [v.attrs.referrer_host],
  campaign: (v) => [v.attrs.utm_campaign],
  keyword: (v) => [v.attrs.utm_term],
  landing_page: (v) => [v.landing_page],
  page: (v) => {
    const paths = new Set<string>();
    for (const e of v.events) if (e.type === 'pageview') paths.add(e.path);
    return [...paths];
  },
  country: (v) => [v.attrs.country],
  device: (v) => [v.attrs.device],
  browser: (v) => [v.attrs.browser],
  os: (v) => [v.attrs.os],
  language: (v) => [v.attrs.language],
  utm_source: (v) => [v.attrs.utm_source],
  utm_medium: (v) => [v.attrs.utm_medium],
  utm_content: (v) => [v.attrs.utm_content],
  exit_page: (v) => [exitPageOf(v)],
};

/** The path of a visit's last page view (events are in time order), null without one. */
export function exitPageOf(v: Visit): string | null {
  for (let i = v.events.length - 1; i >= 0; i--) {
    const e = v.events[i];
    if (e?.type === 'pageview') return e.path;
  }
  return null;
}

/**
 * Rollup items of a dimension are split by a hash of the value into this many
 * buckets, so that a period of a site with many distinct pages stays well under
 * DynamoDB's 400 KB item limit (about 8,000 values of 40 bytes per bucket).
 */
export const DIMENSION_BUCKETS: Readonly<Record<Dimension, number>> = {
  channel: 1,
  referrer: 2,
  campaign: 2,
  keyword: 2,
  landing_page: 4,
  page: 8,
  country: 1,
  device: 1,
  browser: 1,
  os: 1,
  language: 1,
  utm_source: 2,
  utm_medium: 2,
  utm_content: 2,
  exit_page: 4,
};

/**
 * Goal rollups (`docs/api.md` "Goals") are split like a dimension,
 * by a hash of the goal key, into this many buckets.
 */
export const GOAL_BUCKETS = 4;

/**
 * Daily (`D`, local day `YYYY-MM-DD`) and monthly (`M`, `YYYY-MM`) rollups of
 * every metric, and hourly ones (`H`, local wall-clock hour `YYYY-MM-DDTHH`)
 * of the `visits` metric only: the time series by hour (`docs/api.md`) needs
 * visits, page views and visitors per hour, and no breakdown is by hour.
 * `goal` is the goals report's metric (not a breakdown dimension).
 */
export type Granularity = 'H' | 'D' | 'M';
export type RollupMetric = 'visits' | Dimension | 'goal';

/**
 * Named counters of the `visits` items besides `visits` and `pageviews`, all
 * counts that add (the overview's top stats, `docs/api.md` "Top stats (overview)"):
 * - `bounces`: visits with exactly one page view and no goal (Plausible's
 *   bounce: https://plausible.io/docs/metrics-definitions);
 * - `timed_visits`: visits with more than one event, the ones whose duration
 *   is measured;
 * - `duration_ms`: the sum over those visits of last event time minus first
 *   event time, in milliseconds.
 */
export const VISIT_COUNTERS = ['bounces', 'timed_visits', 'duration_ms'] as const;
export type VisitCounter = (typeof VISIT_COUNTERS)[number];

/**
 * Goal keys (the values of the `goal` metric): a goal's name, and for
 * `Outbound Link: Click` also one key per link URL, the name and the URL
 * joined by `GOAL_LINK_SEPARATOR` (a control character no goal name keeps).
 */
export const GOAL_LINK_SEPARATOR = '\u001f';
export const goalLinkKey = (name: string, link: string): string => `${name}${GOAL_LINK_SEPARATOR}${link}`;
/**
 * A goal item keeps at most `GOAL_KEYS_PER_ITEM` goal keys (goal names are
 * free-form): the counts and visitors of keys beyond go to `OTHER_GOALS_KEY`.
 * With `GOAL_BUCKETS` items per period, a site's period holds at most 200
 * goal keys (names and outbound URLs together); an item stays under
 * 50 × (2 KiB URL + 64 B name + a 2 KiB visitor sketch) ≈ 210 KB, below
 * DynamoDB's 400 KB.
 */
export const GOAL_KEYS_PER_ITEM = 50;
export const OTHER_GOALS_KEY = `${GOAL_LINK_SEPARATOR}(other)`;
/**
 * Goal visitor sketches: the exact ids up to 32, then 2^10 HyperLogLog
 * registers (1 KiB, relative standard error 1.04/√1024 = 3.25%).
 */
export const GOAL_VISITOR_LIMITS = { exact: 32, precision: 10 } as const;

/**
 * Where a goal key's counts go in an item that already holds `known` keys:
 * to the key itself if it is known or there is room (it is then added to
 * `known`), else to `OTHER_GOALS_KEY`. Keys are never removed from an item,
 * so every delta of a key goes to the same place.
 */
export function goalKeySlot(known: Set<string>): (key: string) => string {
  return (key) => {
    if (known.has(key)) return key;
    if (known.size < GOAL_KEYS_PER_ITEM) {
      known.add(key);
      return key;
    }
    return OTHER_GOALS_KEY;
  };
}

/** Every rollup metric: `visits`, the dimensions and `goal`. */
export const ROLLUP_METRICS: readonly RollupMetric[] = ['visits', ...DIMENSIONS, 'goal'];

/** The goal name and link URL (null for a goal's own key) of a goal key. */
export function parseGoalKey(key: string): { goal: string; link: string | null } {
  const at = key.indexOf(GOAL_LINK_SEPARATOR);
  return at < 0 ? { goal: key, link: null } : { goal: key.slice(0, at), link: key.slice(at + 1) };
}

/**
 * The goal keys of a visit with the goal events of each: every goal's name,
 * and for outbound link clicks with a URL the link's key as well.
 */
export function goalKeysOf(visit: Visit): Map<string, number> {
  const keys = new Map<string, number>();
  for (const e of visit.events) {
    if (e.type !== 'goal' || e.goal === null) continue;
    keys.set(e.goal, (keys.get(e.goal) ?? 0) + 1);
    if (e.goal === OUTBOUND_GOAL && e.link !== null) {
      const key = goalLinkKey(e.goal, e.link);
      keys.set(key, (keys.get(key) ?? 0) + 1);
    }
  }
  return keys;
}

/**
 * What payments are grouped by: the breakdown dimensions and `goal`, the
 * goal keys of the credited visit (revenue by goal, `docs/api.md` "Goals"; a payment
 * counts for every goal key of its visit, like `page`).
 */
export const PAYMENT_DIMENSIONS = [...DIMENSIONS, 'goal'] as const;
export type PaymentDimension = (typeof PAYMENT_DIMENSIONS)[number];

/**
 * The most values of one dimension a payment credits, and the most bytes
 * (UTF-8) they take together: the first values in the visit's order while
 * both hold, and always the first. A visit can view thousands of pages (or
 * click thousands of outbound links) of up to 2,048 characters each, and a
 * payment's credited values are stored on its PAYMENT item, its customer's
 * CUSTOMER item and its PAYMENT_LIST item, so without this cap one long
 * visit would take those items past DynamoDB's 400 KB item limit. With it,
 * one payment's values of the 16 payment dimensions take at most 16 × 6 KB
 * (4 KiB, or one longer value alone: 2,048 characters of 3 bytes) in the
 * worst case, typically a few hundred bytes (`docs/data-model.md`).
 */
export const CREDITED_VALUES = { count: 100, bytes: 4096 } as const;

/** `values` deduplicated and cut to `CREDITED_VALUES` (the first value is always kept). */
export function creditedValuesOf(values: Iterable<string>): string[] {
  const out: string[] = [];
  let bytes = 0;
  for (const v of new Set(values)) {
    const size = Buffer.byteLength(v);
    if (out.length >= CREDITED_VALUES.count || (out.length > 0 && bytes + size > CREDITED_VALUES.bytes)) break;
    out.push(v);
    bytes += size;
  }
  return out;
}

/** Every payment dimension's values of a (credited) visit, `(none)` as `NONE`, each cut to `CREDITED_VALUES`. */
export function paymentDimensionsOf(visit: Visit): Record<PaymentDimension, string[]> {
  const out = Object.fromEntries(
    DIMENSIONS.map((d) => [d, creditedValuesOf(DIMENSION_VALUES[d](visit).map((v) => v ?? NONE))]),
  ) as Record<Dimension, string[]>;
  return { ...out, goal: creditedValuesOf(goalKeysOf(visit).keys()) };
}

/** The top-stats counters of one visit (`VISIT_COUNTERS`). */
export function visitCounters(visit: Visit): Record<VisitCounter, number> {
  const pageviews = pageviewsOf(visit);
  const goals = visit.events.some((e) => e.type === 'goal');
  const timed = visit.events.length > 1;
  return {
    bounces: pageviews === 1 && !goals ? 1 : 0,
    timed_visits: timed ? 1 : 0,
    duration_ms: timed ? visit.end - visit.start : 0,
  };
}

/** Identifies one rollup item of a site. */
export interface RollupKey {
  site: string;
  metric: RollupMetric;
  granularity: Granularity;
  period: string;
  bucket: number;
}

/** Stored key of "no value" (`(none)`): dimension values are never empty strings. */
export const NONE = '';

/**
 * What one batch adds to one rollup item. Storage adds every count to the
 * item's and unions every set into its sketches, whatever the field's name,
 * so a new counter needs no storage change:
 * - `visits` and `pageviews`: visits that started in the period (and their
 *   page views), on `visits` items;
 * - `counters`: named counts that add: `VISIT_COUNTERS` on `visits` items;
 *   on `goal` items the completions (goal events) per goal key;
 * - `values`: visits per dimension value; on `goal` items the visits in which
 *   each goal key happened (once per visit);
 * - `visitors`: visitor ids seen in the period (added to the item's sketch,
 *   which only grows: events are never taken back), on `visits` items;
 * - `valueVisitors`: visitor ids per value (a small sketch per value, which
 *   only grows), on `goal` items: the visitors who completed each goal key.
 */
export interface RollupDelta {
  key: RollupKey;
  visits: number;
  pageviews: number;
  counters: Map<string, number>;
  values: Map<string, number>;
  visitors: Set<string>;
  valueVisitors: Map<string, Set<string>>;
}

/** The bucket count of each metric split by value. */
const BUCKETS: Readonly<Record<Exclude<RollupMetric, 'visits'>, number>> = { ...DIMENSION_BUCKETS, goal: GOAL_BUCKETS };

/** The bucket of a dimension value or goal key: FNV-1a (32-bit) of its UTF-16 code units, modulo the bucket count. */
export function bucketOf(dimension: Exclude<RollupMetric, 'visits'>, value: string): number {
  const buckets = BUCKETS[dimension];
  if (buckets === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

const HOUR_MS = 3_600_000;

/** Local days remembered per timezone by `LocalDays`. */
const REMEMBERED_DAYS = 8;

/**
 * `localDay` and `localHour` with a memory of the last few local days seen
 * per timezone (`REMEMBERED_DAYS`, most recent first): events of a batch
 * cluster in time, but a batch also re-rolls visits it replaces and events
 * of visits that cross midnight, so with a memory of one day the lookups
 * alternated between two days and each miss cost three Intl calls
 * (`dayStart` twice, `localDay`); a profile of the bench site's load spent
 * a quarter of the sessionizer's time there.
 */
export class LocalDays {
  private readonly recent = new Map<string, Array<{ from: number; to: number; day: string }>>();

  private span(tsMs: number, timezone: string): { from: number; to: number; day: string } {
    let spans = this.recent.get(timezone);
    if (!spans) this.recent.set(timezone, (spans = []));
    const at = spans.findIndex((s) => tsMs >= s.from && tsMs < s.to);
    if (at === 0) return spans[0] as { from: number; to: number; day: string };
    if (at > 0) {
      const [hit] = spans.splice(at, 1) as [{ from: number; to: number; day: string }];
      spans.unshift(hit);
      return hit;
    }
    const day = localDay(tsMs, timezone);
    const span = { from: dayStart(day, timezone), to: dayStart(addDays(day, 1), timezone), day };
    spans.unshift(span);
    if (spans.length > REMEMBERED_DAYS) spans.pop();
    return span;
  }

  of(tsMs: number, timezone: string): string {
    return this.span(tsMs, timezone).day;
  }

  /**
   * `localHour(tsMs, timezone)`. On a day of exactly 24 hours the clock did
   * not change, so the hour is the whole hours since local midnight; a DST day
   * asks Intl.
   */
  hourOf(tsMs: number, timezone: string): string {
    const { from, to, day } = this.span(tsMs, timezone);
    if (to - from !== 24 * HOUR_MS) return localHour(tsMs, timezone);
    return `${day}T${String(Math.floor((tsMs - from) / HOUR_MS)).padStart(2, '0')}`;
  }
}

const MAX_BUCKETS = 8;
/** Slot of a metric and bucket among a period's deltas: `visits` first, then each dimension's buckets. */
const DIMENSION_INDEX = new Map<RollupMetric, number>(DIMENSIONS.map((d, i) => [d, i]));
DIMENSION_INDEX.set('goal', DIMENSIONS.length);
const slotOf = (metric: RollupMetric, bucket: number) =>
  metric === 'visits' ? 0 : 1 + (DIMENSION_INDEX.get(metric) ?? 0) * MAX_BUCKETS + bucket;

/** Accumulates rollup deltas of a batch: contributions of new visits minus those of the visits they replace. */
export class RollupDeltas {
  // Deltas by period, then by slot: one string key per visit and period instead of one per dimension.
  private readonly periods = new Map<
    string,
    { site: string; granularity: Granularity; period: string; slots: Array<RollupDelta | undefined> }
  >();
  private readonly days = new LocalDays();

  // The last period looked up per granularity: events of a batch mostly share their day and month.
  private readonly recent: Partial<
    Record<Granularity, { site: string; period: string; slots: Array<RollupDelta | undefined> }>
  > = {};

  private slots(site: string, granularity: Granularity, period: string): Array<RollupDelta | undefined> {
    const last = this.recent[granularity];
    if (last && last.period === period && last.site === site) return last.slots;
    const id = `${site}|${granularity}|${period}`;
    let entry = this.periods.get(id);
    if (!entry) {
      entry = { site, granularity, period, slots: [] };
      this.periods.set(id, entry);
    }
    this.recent[granularity] = entry;
    return entry.slots;
  }

  private delta(
    slots: Array<RollupDelta | undefined>,
    site: string,
    metric: RollupMetric,
    granularity: Granularity,
    period: string,
    bucket: number,
  ): RollupDelta {
    const slot = slotOf(metric, bucket);
    let d = slots[slot];
    if (!d) {
      d = {
        key: { site, metric, granularity, period, bucket },
        visits: 0,
        pageviews: 0,
        counters: new Map(),
        values: new Map(),
        visitors: new Set(),
        valueVisitors: new Map(),
      };
      slots[slot] = d;
    }
    return d;
  }

  /**
   * Adds (`sign` 1) or takes back (`sign` -1) a visit's counts: to the `visits`
   * items of its start hour, day and month (with `VISIT_COUNTERS`), and to
   * each dimension's and the `goal` metric's items of its start day and month.
   * Hours and days are local to `timezone`. Goal visitors are only added
   * (`sign` 1): like every visitor sketch they only grow.
   */
  addVisit(visit: Visit, timezone: string, sign: 1 | -1): void {
    const day = this.days.of(visit.start, timezone);
    const periods: Array<[Granularity, string]> = [
      ['D', day],
      ['M', day.slice(0, 7)],
    ];
    const pageviews = pageviewsOf(visit);
    const counters = Object.entries(visitCounters(visit)).filter(([, n]) => n !== 0);
    const goals = [...goalKeysOf(visit)].map(([key, n]) => [key, n, bucketOf('goal', key)] as const);
    // Each dimension's values and buckets once per visit, then into both periods.
    const values: Array<[Dimension, string, number]> = [];
    for (const dimension of DIMENSIONS) {
      for (const raw of DIMENSION_VALUES[dimension](visit)) {
        const value = raw ?? NONE;
        values.push([dimension, value, bucketOf(dimension, value)]);
      }
    }
    for (const [granularity, period] of periods) {
      const slots = this.slots(visit.site, granularity, period);
      const totals = this.delta(slots, visit.site, 'visits', granularity, period, 0);
      totals.visits += sign;
      totals.pageviews += sign * pageviews;
      addCounts(totals.counters, counters, sign);
      for (const [dimension, value, bucket] of values) {
        const d = this.delta(slots, visit.site, dimension, granularity, period, bucket);
        d.values.set(value, (d.values.get(value) ?? 0) + sign);
      }
      for (const [key, completions, bucket] of goals) {
        const d = this.delta(slots, visit.site, 'goal', granularity, period, bucket);
        d.values.set(key, (d.values.get(key) ?? 0) + sign);
        d.counters.set(key, (d.counters.get(key) ?? 0) + sign * completions);
        if (sign === 1) {
          let ids = d.valueVisitors.get(key);
          if (!ids) d.valueVisitors.set(key, (ids = new Set()));
          ids.add(visit.visitor_id);
        }
      }
    }
    const hour = this.days.hourOf(visit.start, timezone);
    const hourly = this.delta(this.slots(visit.site, 'H', hour), visit.site, 'visits', 'H', hour, 0);
    hourly.visits += sign;
    hourly.pageviews += sign * pageviews;
    addCounts(hourly.counters, counters, sign);
  }

  /** Records that `visitorId` was active at `tsMs` (for distinct visitors per local hour, day and month). */
  addActivity(site: string, visitorId: string, tsMs: number, timezone: string): void {
    const day = this.days.of(tsMs, timezone);
    const month = day.slice(0, 7);
    this.delta(this.slots(site, 'D', day), site, 'visits', 'D', day, 0).visitors.add(visitorId);
    this.delta(this.slots(site, 'M', month), site, 'visits', 'M', month, 0).visitors.add(visitorId);
    const hour = this.days.hourOf(tsMs, timezone);
    this.delta(this.slots(site, 'H', hour), site, 'visits', 'H', hour, 0).visitors.add(visitorId);
  }

  /** Non-empty deltas: zero counts and unchanged items are left out. */
  list(): RollupDelta[] {
    const out: RollupDelta[] = [];
    for (const { slots } of this.periods.values()) {
      for (const d of slots) {
        if (!d) continue;
        for (const [value, n] of d.values) if (n === 0) d.values.delete(value);
        for (const [name, n] of d.counters) if (n === 0) d.counters.delete(name);
        if (
          d.visits !== 0 ||
          d.pageviews !== 0 ||
          d.counters.size > 0 ||
          d.values.size > 0 ||
          d.visitors.size > 0 ||
          d.valueVisitors.size > 0
        )
          out.push(d);
      }
    }
    return out;
  }
}

function addCounts(into: Map<string, number>, counts: ReadonlyArray<[string, number]>, sign: 1 | -1): void {
  for (const [name, n] of counts) into.set(name, (into.get(name) ?? 0) + sign * n);
}
