import type { Interval, RangeQuery } from './api.js';

/**
 * The dashboard's range, kept in the URL (`?range=30d` or `?from=…&to=…`) so
 * a link reproduces the view (`docs/app.md` "Site dashboard"). Pure functions of the query string.
 */

/** Named ranges of the report API (docs/api.md), in the picker's order, with the chart's default interval. */
export const RANGES = [
  { value: 'today', label: 'Today', key: 'd', interval: 'hour' },
  { value: '7d', label: 'Last 7 days', key: 'w', interval: 'day' },
  { value: '30d', label: 'Last 30 days', key: 't', interval: 'day' },
  { value: '90d', label: 'Last 90 days', key: 'n', interval: 'day' },
  { value: '12m', label: 'Last 12 months', key: 'y', interval: 'month' },
  // The length of `all` is known once the API resolves it: its default interval follows the same rule.
  { value: 'all', label: 'All time', key: 'a', interval: undefined },
] as const;

export type NamedRange = (typeof RANGES)[number]['value'];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The range a query string asks for: explicit `from`/`to` win (as in the API),
 * then a known `range`, else `fallback` (the site's default is the API's
 * business, so the app's fallback is `30d` like the API's).
 */
export function rangeFromQuery(query: Record<string, string | undefined>, fallback: NamedRange = '30d'): RangeQuery {
  const { from, to, range } = query;
  if (from && to && DATE.test(from) && DATE.test(to)) return from <= to ? { from, to } : { from: to, to: from };
  if (range && RANGES.some((r) => r.value === range)) return { range };
  return { range: fallback };
}

/** A parameter's value: absent (null, undefined, empty), one value, or several (the filters' repeated `f`). */
export type SearchValue = string | number | null | undefined | readonly string[];

/**
 * The query string that reproduces a range plus any other parameters (a list
 * repeats its name), encoded so that `,` `:` `/` stay readable
 * (`?range=30d&f=is,page,/blog`): they need no escape in a query value
 * (RFC 3986 3.4), and `URLSearchParams` reads both forms alike.
 */
export function rangeSearch(range: RangeQuery, extra: Record<string, SearchValue> = {}): string {
  const pairs: Array<[string, string]> =
    'from' in range
      ? [
          ['from', range.from],
          ['to', range.to],
        ]
      : [['range', range.range]];
  for (const [k, v] of Object.entries(extra)) {
    if (typeof v === 'object' && v !== null) for (const one of v) pairs.push([k, one]);
    else if (v !== undefined && v !== null && v !== '') pairs.push([k, String(v)]);
  }
  return toSearch(pairs);
}

/** A query string (`?a=1&b=2`, or `''` for none) from name–value pairs, in their order, encoded as `rangeSearch` says. */
export function toSearch(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs.length ? `?${pairs.map(([k, v]) => `${readable(k)}=${readable(v)}`).join('&')}` : '';
}

const readable = (s: string): string =>
  encodeURIComponent(s).replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%2F/g, '/');

/** Days from `from` to `to`, both inclusive (local dates, so no DST question). */
export function daysBetween(from: string, to: string): number {
  return (
    Math.round(
      (Date.UTC(+to.slice(0, 4), +to.slice(5, 7) - 1, +to.slice(8, 10)) -
        Date.UTC(+from.slice(0, 4), +from.slice(5, 7) - 1, +from.slice(8, 10))) /
        86_400_000,
    ) + 1
  );
}

/** Above this many days a chart by day is too dense to read; months instead (the API's own limit for `day`). */
export const MAX_DAY_POINTS = 400;
/** The API's longest range by hour, days (docs/api.md). */
export const MAX_HOUR_DAYS = 7;
/** Ranges longer than this many days are charted by month unless asked otherwise: a year by day is 365 points, most of them flat. */
export const MONTHLY_FROM_DAYS = 92;

/**
 * The chart's default interval: by hour for one day, by day up to about a
 * quarter, by month beyond (Plausible's defaults). The length of `all` is
 * unknown until the API resolves it, so `all` leaves the choice to the API
 * (`undefined`: no `interval` parameter).
 */
export function intervalFor(range: RangeQuery): Interval | undefined {
  if ('from' in range) {
    const days = daysBetween(range.from, range.to);
    return days <= 1 ? 'hour' : days <= MONTHLY_FROM_DAYS ? 'day' : 'month';
  }
  const named = RANGES.find((r) => r.value === range.range);
  return named ? named.interval : 'day';
}

/**
 * The intervals the chart offers for a range of `days` days: those the API
 * accepts for that length (`hour` up to 7 days, `day` up to 400) that draw
 * more than one point.
 */
export function intervalsFor(days: number): Interval[] {
  const offered: Array<[Interval, boolean]> = [
    ['hour', days <= MAX_HOUR_DAYS],
    ['day', days >= 2 && days <= MAX_DAY_POINTS],
    ['month', days > 31],
  ];
  return offered.filter(([, ok]) => ok).map(([interval]) => interval);
}

/** The interval the address asks for (`?interval=`), if it is one the API knows. */
export function intervalFromQuery(query: Record<string, string | undefined>): Interval | undefined {
  const asked = query.interval;
  return asked === 'hour' || asked === 'day' || asked === 'month' ? asked : undefined;
}

/** A short human label for a range: "Last 30 days", or "3 Mar – 9 Mar 2026". */
export function rangeLabel(range: RangeQuery): string {
  if ('range' in range) return RANGES.find((r) => r.value === range.range)?.label ?? range.range;
  return range.from === range.to ? formatDay(range.from) : `${formatDay(range.from)} – ${formatDay(range.to)}`;
}

// Made at first use: this module runs before the early requests leave (start.ts), and a new tab's first
// Intl object loads ICU's data.
let dayFormat: Intl.DateTimeFormat | undefined;

/** `2026-03-09` → `9 Mar 2026` (a local date, formatted without shifting it). */
export function formatDay(day: string): string {
  dayFormat ??= new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  return dayFormat.format(new Date(`${day}T00:00:00Z`));
}
