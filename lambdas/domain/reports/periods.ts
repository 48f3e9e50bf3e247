import { splitMonths, type DateRange } from '../range.js';
import type { Granularity } from '../rollup.js';

/** One read of rollups: a granularity and an inclusive span of its periods. */
export interface PeriodSpan {
  granularity: Granularity;
  from: string;
  to: string;
}

/**
 * The rollup reads that cover a range exactly: whole months from the monthly
 * items, the days before and after them from the daily items — at most three
 * reads for any range up to 10 years.
 */
export function periodSpans(range: Pick<DateRange, 'from' | 'to'>): PeriodSpan[] {
  const { headDays, months, tailDays } = splitMonths(range.from, range.to);
  const spans: PeriodSpan[] = [];
  if (headDays) spans.push({ granularity: 'D', from: headDays[0], to: headDays[1] });
  if (months) spans.push({ granularity: 'M', from: months[0], to: months[1] });
  if (tailDays) spans.push({ granularity: 'D', from: tailDays[0], to: tailDays[1] });
  return spans;
}

/**
 * The month a range ends in when its days in that month are all the days of
 * the month that can hold a visit: they start on the 1st and the range ends
 * on `today` or later (a visit is counted on the local day it starts, never
 * after the clock). That month's monthly item then holds exactly the visits
 * and visitors of those days. Null when the range's last month is whole, or
 * starts after the 1st, or ended before today.
 * @param today the site-local day of the clock, `YYYY-MM-DD`
 */
export function openMonth(range: Pick<DateRange, 'from' | 'to'>, today: string): string | null {
  const last = periodSpans(range).at(-1);
  return last?.granularity === 'D' && last.from.endsWith('-01') && last.to >= today ? last.from.slice(0, 7) : null;
}

/**
 * `periodSpans` with the days of the `openMonth` read from its monthly item
 * instead (with the whole months when there are some: one Query), for
 * readers that sum the `visits` items and union their visitor sets; the
 * monthly item holds the same visits and visitors as those days.
 */
export function openMonthSpans(range: Pick<DateRange, 'from' | 'to'>, open: string): PeriodSpan[] {
  const spans = periodSpans(range).slice(0, -1);
  const months = spans.find((s) => s.granularity === 'M');
  if (months) return spans.map((s) => (s === months ? { ...s, to: open } : s));
  return [...spans, { granularity: 'M', from: open, to: open }];
}

/** Dollars from cents, and ratios rounded for display (`docs/api.md`). */
export const usd = (cents: number): number => Math.round(cents) / 100;
export const ratio = (n: number): number => Math.round(n * 1e6) / 1e6;
