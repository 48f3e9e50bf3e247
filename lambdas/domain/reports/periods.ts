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

/** Dollars from cents, and ratios rounded for display (`docs/api.md`). */
export const usd = (cents: number): number => Math.round(cents) / 100;
export const ratio = (n: number): number => Math.round(n * 1e6) / 1e6;
