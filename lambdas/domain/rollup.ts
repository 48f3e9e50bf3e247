import type { Visit } from './visit.js';
import { pageviewsOf } from './visit.js';
import { addDays, dayStart, localDay, localHour } from './range.js';

/** The 11 breakdown dimensions of spec §4.2, in the spec's order. */
export const DIMENSIONS = ['channel', 'referrer', 'campaign', 'keyword', 'landing_page', 'page', 'country', 'device', 'browser', 'os', 'language'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/**
 * The value(s) a visit has for each dimension (spec §4.2 table). `null` is a
 * visit without a value (the `(none)` row). `page` lists every page viewed,
 * once per visit: the dimension counts visits that viewed the page.
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
};

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
};

/**
 * Daily (`D`, local day `YYYY-MM-DD`) and monthly (`M`, `YYYY-MM`) rollups of
 * every metric, and hourly ones (`H`, local wall-clock hour `YYYY-MM-DDTHH`)
 * of the `visits` metric only: the time series by hour (`docs/api.md`) needs
 * visits, page views and visitors per hour, and no breakdown is by hour.
 */
export type Granularity = 'H' | 'D' | 'M';
export type RollupMetric = 'visits' | Dimension;

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
 * What one batch adds to one rollup item. `visits` and `pageviews` are visits
 * that started in the period (and their page views); `values` counts visits
 * per dimension value; `visitors` are visitor ids seen in the period (added to
 * the item's sketch, which only grows: events are never taken back).
 */
export interface RollupDelta {
  key: RollupKey;
  visits: number;
  pageviews: number;
  values: Map<string, number>;
  visitors: Set<string>;
}

/** The bucket of a dimension value: FNV-1a (32-bit) of its UTF-16 code units, modulo the bucket count. */
export function bucketOf(dimension: Dimension, value: string): number {
  const buckets = DIMENSION_BUCKETS[dimension];
  if (buckets === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

const HOUR_MS = 3_600_000;

/**
 * `localDay` and `localHour` with a memory of the last local day seen per
 * timezone: events of a batch cluster in time, so most lookups are a range
 * check instead of an Intl call.
 */
export class LocalDays {
  private readonly last = new Map<string, { from: number; to: number; day: string }>();

  private span(tsMs: number, timezone: string): { from: number; to: number; day: string } {
    const hit = this.last.get(timezone);
    if (hit && tsMs >= hit.from && tsMs < hit.to) return hit;
    const day = localDay(tsMs, timezone);
    const span = { from: dayStart(day, timezone), to: dayStart(addDays(day, 1), timezone), day };
    this.last.set(timezone, span);
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
const slotOf = (metric: RollupMetric, bucket: number) => (metric === 'visits' ? 0 : 1 + (DIMENSION_INDEX.get(metric) ?? 0) * MAX_BUCKETS + bucket);

/** Accumulates rollup deltas of a batch: contributions of new visits minus those of the visits they replace. */
export class RollupDeltas {
  // Deltas by period, then by slot: one string key per visit and period instead of one per dimension.
  private readonly periods = new Map<string, { site: string; granularity: Granularity; period: string; slots: Array<RollupDelta | undefined> }>();
  private readonly days = new LocalDays();

  // The last period looked up per granularity: events of a batch mostly share their day and month.
  private readonly recent: Partial<Record<Granularity, { site: string; period: string; slots: Array<RollupDelta | undefined> }>> = {};

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

  private delta(slots: Array<RollupDelta | undefined>, site: string, metric: RollupMetric, granularity: Granularity, period: string, bucket: number): RollupDelta {
    const slot = slotOf(metric, bucket);
    let d = slots[slot];
    if (!d) {
      d = { key: { site, metric, granularity, period, bucket }, visits: 0, pageviews: 0, values: new Map(), visitors: new Set() };
      slots[slot] = d;
    }
    return d;
  }

  /**
   * Adds (`sign` 1) or takes back (`sign` -1) a visit's counts: to the `visits`
   * items of its start hour, day and month, and to each dimension's items of
   * its start day and month. Hours and days are local to `timezone`.
   */
  addVisit(visit: Visit, timezone: string, sign: 1 | -1): void {
    const day = this.days.of(visit.start, timezone);
    const periods: Array<[Granularity, string]> = [
      ['D', day],
      ['M', day.slice(0, 7)],
    ];
    const pageviews = pageviewsOf(visit);
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
      for (const [dimension, value, bucket] of values) {
        const d = this.delta(slots, visit.site, dimension, granularity, period, bucket);
        d.values.set(value, (d.values.get(value) ?? 0) + sign);
      }
    }
    const hour = this.days.hourOf(visit.start, timezone);
    const hourly = this.delta(this.slots(visit.site, 'H', hour), visit.site, 'visits', 'H', hour, 0);
    hourly.visits += sign;
    hourly.pageviews += sign * pageviews;
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
        if (d.visits !== 0 || d.pageviews !== 0 || d.values.size > 0 || d.visitors.size > 0) out.push(d);
      }
    }
    return out;
  }
}
