import { addDays, localHour, type DateRange } from '../range.js';

/** The two summaries a recipient can receive (`docs/app.md`, "Email reports"). */
export const REPORT_KINDS = ['weekly', 'monthly'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

/**
 * The site-local hour from which a period's summary is sent, on the first day of the next period
 * (Monday for `weekly`, the 1st for `monthly`): the morning, as Plausible sends them. The scheduled
 * function tries every run until that local day ends, so a failed send is retried for 16 hours.
 */
export const SEND_HOUR = 8;

/** One summarized period: its key (`YYYY-MM-DD` of a week's Monday, `YYYY-MM` of a month), its days, and the period before it. */
export interface ReportPeriod {
  kind: ReportKind;
  key: string;
  range: DateRange;
  previous: DateRange;
}

/** Day of the week of `YYYY-MM-DD`, 0 = Sunday … 6 = Saturday (a UTC date has no DST). */
function weekday(day: string): number {
  return new Date(`${day}T00:00:00Z`).getUTCDay();
}

/** The Monday of the ISO week (Monday to Sunday) holding `day`. */
function mondayOf(day: string): string {
  return addDays(day, -((weekday(day) + 6) % 7));
}

const firstOfMonth = (day: string) => `${day.slice(0, 7)}-01`;

/** The complete period of `kind` that ended just before the one holding local day `today`. */
function periodBefore(kind: ReportKind, today: string, timezone: string): ReportPeriod {
  if (kind === 'weekly') {
    const from = addDays(mondayOf(today), -7);
    return {
      kind,
      key: from,
      range: { from, to: addDays(from, 6), timezone },
      previous: { from: addDays(from, -7), to: addDays(from, -1), timezone },
    };
  }
  const to = addDays(firstOfMonth(today), -1);
  const from = firstOfMonth(to);
  const before = addDays(from, -1);
  return {
    kind,
    key: from.slice(0, 7),
    range: { from, to, timezone },
    previous: { from: firstOfMonth(before), to: before, timezone },
  };
}

/**
 * The period whose summary is due at `nowMs` in `timezone`, or null: the week before on a local
 * Monday, the month before on the local 1st, from `SEND_HOUR` to the end of that local day.
 */
export function duePeriod(kind: ReportKind, nowMs: number, timezone: string): ReportPeriod | null {
  const hour = localHour(nowMs, timezone);
  const today = hour.slice(0, 10);
  if (Number(hour.slice(11, 13)) < SEND_HOUR) return null;
  const first = kind === 'weekly' ? weekday(today) === 1 : today.endsWith('-01');
  return first ? periodBefore(kind, today, timezone) : null;
}

/** The last complete period of `kind` at `nowMs` (what `footfall reports preview` shows): last week, or last month. */
export function lastPeriod(kind: ReportKind, nowMs: number, timezone: string): ReportPeriod {
  return periodBefore(kind, localHour(nowMs, timezone).slice(0, 10), timezone);
}
