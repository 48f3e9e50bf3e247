import type { Interval, Point } from '../api.js';
import { formatCount, formatUsd } from '../format.js';

/**
 * `start` of a time-series point (site-local `YYYY-MM-DD`, `YYYY-MM` or
 * `YYYY-MM-DDTHH:00`) as seconds on a UTC axis: the chart draws local times
 * as they are, never shifted into the viewer's timezone.
 */
export function pointSeconds(start: string): number {
  const [date, hour] = start.split('T');
  const [y, m, d] = (date ?? '').split('-').map(Number);
  return Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1, hour ? Number(hour.slice(0, 2)) : 0) / 1000;
}

/**
 * The site-local wall clock now, in the time series' `start` form for
 * `interval` (`YYYY-MM-DDTHH:00`, `YYYY-MM-DD` or `YYYY-MM`), from `now` (ms
 * since the epoch) and the site's IANA `timezone`.
 */
export function localNow(now: number, timezone: string, interval: 'hour' | 'day' | 'month'): string {
  const parts = new Map(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(now))
      .map((p) => [p.type, p.value]),
  );
  const month = `${parts.get('year')}-${parts.get('month')}`;
  if (interval === 'month') return month;
  const day = `${month}-${parts.get('day')}`;
  return interval === 'day' ? day : `${day}T${parts.get('hour')}:00`;
}

/**
 * A point's value, or null for a point that starts after `nowStart` (the
 * current local hour, day or month from `localNow`): a future hour has no
 * data yet, and drawing it as 0 would read as a drop. The strings compare in
 * time order because they share one fixed-width form.
 */
export function pastOrNull(start: string, value: number, nowStart: string): number | null {
  return start > nowStart ? null : value;
}

/**
 * What the chart shows, for a screen reader (and read by the browser tests):
 * its points, the most visitors of one point and the revenue of them all.
 */
export function chartLabel(points: readonly Point[] | undefined, interval: Interval): string {
  if (!points) return 'Visitors and revenue over time';
  const peak = points.reduce((m, p) => Math.max(m, p.visitors), 0);
  const revenue = points.reduce((sum, p) => sum + p.revenue_usd, 0);
  return (
    `Visitors and revenue per ${interval}, ${formatCount(points.length)} points: ` +
    `at most ${formatCount(peak)} visitors in one ${interval}, ${formatUsd(revenue)} revenue in all`
  );
}
