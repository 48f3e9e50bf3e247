import { BadParameterError } from './errors.js';

/**
 * Report ranges (`docs/api.md` "Ranges", "Limits"; days are local, `docs/api.md` "Conventions").
 *
 * Every day is a local calendar date `YYYY-MM-DD` in the site's IANA timezone;
 * instants are ms since the epoch. Day arithmetic is integer arithmetic on
 * those strings through UTC dates (a UTC date has no DST, so "plus one day" is
 * always exactly one calendar day). Only turning a day into an instant and back
 * needs the timezone, and that goes through `Intl.DateTimeFormat`, which knows
 * every IANA zone's history: DST days are 23 or 25 hours long, some zones skip
 * or repeat local midnight, and all of that comes out right without a date
 * library.
 */

/** Range names accepted in `range` (`docs/api.md` "Ranges"). */
export const RANGE_NAMES = ['today', '7d', '30d', '90d', '12m', 'all'] as const;
export type RangeName = (typeof RANGE_NAMES)[number];

/** Range object echoed in responses (`docs/api.md` "Ranges"): `from` and `to` are both inclusive local days. */
export interface DateRange {
  from: string;
  to: string;
  timezone: string;
}

/** Raw range query parameters as they arrive (`docs/api.md` "Ranges"); absent ones are `undefined`. */
export interface RangeQuery {
  range?: string;
  from?: string;
  to?: string;
}

/**
 * A resolved range: the days to report on, the `previous` range of equal length
 * just before it (`docs/api.md` "Overview"), the number of days in each, and the range name
 * used (`custom` for explicit `from`/`to`).
 */
export interface ResolvedRange {
  range: DateRange;
  previous: DateRange;
  days: number;
  name: RangeName | 'custom';
}

const DAY_MS = 86_400_000;

/** Range used when the query names none (`docs/api.md` "Ranges"). */
const DEFAULT_RANGE: RangeName = '30d';
/** A site tracked for this many days or fewer defaults to `all` instead (`docs/api.md` "Ranges"). */
const NEW_SITE_DAYS = 30;
/** Longest explicit `from`/`to` range, in years (`docs/api.md` "Ranges", "Limits"). */
const MAX_EXPLICIT_YEARS = 10;

/**
 * First day of each named range, given today's local day and the site's first
 * tracked day (`docs/api.md` "Ranges": `7d` is the 7 local days
 * ending today, today included). Every named range ends today.
 */
const RANGE_FROM: Record<RangeName, (today: string, firstDay: string | null) => string> = {
  today: (today) => today,
  '7d': (today) => addDays(today, -6),
  '30d': (today) => addDays(today, -29),
  '90d': (today) => addDays(today, -89),
  // Twelve calendar months ending today: the day after the same date a year
  // earlier, so 365 or 366 days. From a leap day the date a year earlier does not
  // exist; `addYears` takes the last day of that February (the 28th), so
  // 2028-02-29 starts on 2027-03-01, as does 2028-02-28 (one day shorter).
  '12m': (today) => addDays(addYears(today, -1), 1),
  // The day tracking started. Nothing tracked yet, or a first day after today
  // (events imported with future timestamps, or a first day recorded before a
  // timezone change), gives today alone rather than an inverted range.
  all: (today, firstDay) => (firstDay === null || isBefore(today, firstDay) ? today : firstDay),
};

/** A day as the API accepts it (`docs/api.md` "Conventions"): four-digit year 0001-9999, two-digit month and day. */
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
/**
 * A day as arithmetic may produce it: the range before 0001-01-01 or the day
 * after 9999-12-31 are still days, written with a sign or a fifth digit (ISO
 * 8601 expanded years), so no valid input can make this module crash.
 */
const ANY_DAY_PATTERN = /^(-?\d{4,6})-(\d{2})-(\d{2})$/;

/** [year, month 1-12, day] when `s` names a real calendar date, else null; `strict` for API input. */
function parseDay(s: string, strict: boolean): [number, number, number] | null {
  const m = (strict ? DAY_PATTERN : ANY_DAY_PATTERN).exec(s);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if ((strict && y < 1) || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  return [y, mo, d];
}

/** Days in month `month` (1-12) of `year`, proleptic Gregorian. */
function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one.
  return new Date(utcMs(year, month + 1, 0)).getUTCDate();
}

/** ms of 00:00 UTC on year-month-day; `setUTCFullYear` because `Date.UTC` maps years 0-99 to 1900-1999. */
function utcMs(year: number, month: number, day: number): number {
  return new Date(0).setUTCFullYear(year, month - 1, day);
}

/** [year, month, day] of `day`; throws a plain Error on a malformed day (a programming error here). */
function fields(day: string): [number, number, number] {
  const p = parseDay(day, false);
  if (!p) throw new Error(`not a day YYYY-MM-DD: ${JSON.stringify(day)}`);
  return p;
}

/** `day` as whole days since 1970-01-01. */
function toEpochDay(day: string): number {
  return utcMs(...fields(day)) / DAY_MS;
}

/** True when day `a` comes before day `b`; by number, since expanded years do not sort as strings. */
function isBefore(a: string, b: string): boolean {
  return toEpochDay(a) < toEpochDay(b);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** `YYYY-MM-DD` from fields; years outside 0000-9999 as ISO 8601 expanded years. */
function formatDay(year: number, month: number, day: number): string {
  return `${year < 0 ? `-${pad(-year, 4)}` : pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Whole days since 1970-01-01 back to `YYYY-MM-DD`. */
function fromEpochDay(n: number): string {
  const d = new Date(n * DAY_MS);
  return formatDay(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
}

/**
 * True when `s` is exactly `YYYY-MM-DD` (four-digit year 0001-9999, two-digit
 * month and day) and a real Gregorian date: `2026-02-30`, `2026-2-1`,
 * `20260201` and `''` are all false (`docs/api.md` "Conventions").
 */
export function isValidDay(s: string): boolean {
  return parseDay(s, true) !== null;
}

/** The day `n` days after `day` (`n` may be negative); both `YYYY-MM-DD`. */
export function addDays(day: string, n: number): string {
  return fromEpochDay(toEpochDay(day) + n);
}

/**
 * The same calendar date `n` years after `day` (`n` may be negative), `YYYY-MM-DD`.
 * A leap day lands on February 28 in a year without one, so the result always
 * stays in the same month (used for `12m` and the 10-year limit, `docs/api.md` "Ranges").
 */
export function addYears(day: string, n: number): string {
  const [y, m, d] = fields(day);
  return formatDay(y + n, m, Math.min(d, daysInMonth(y + n, m)));
}

/**
 * Number of days from `from` to `to`, both inclusive (`YYYY-MM-DD`):
 * `daysBetween('2024-02-28', '2024-03-01') === 3`. Zero or negative when `to` is before `from`.
 */
export function daysBetween(from: string, to: string): number {
  return toEpochDay(to) - toEpochDay(from) + 1;
}

/** Every day from `from` to `to`, both inclusive, in order (`YYYY-MM-DD`); empty when `to` is before `from`. */
export function eachDay(from: string, to: string): string[] {
  const start = toEpochDay(from);
  const count = toEpochDay(to) - start + 1;
  return Array.from({ length: Math.max(0, count) }, (_, i) => fromEpochDay(start + i));
}

/** One formatter per zone: building an `Intl.DateTimeFormat` costs far more than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * Formatter giving the wall clock in `timezone` to the second. `h23` so local
 * midnight reads `00`, never `24`. An unknown zone is a programming error
 * (sites are validated on creation), so it is a plain Error, not a 400.
 */
function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    try {
      if (timezone === '') throw new RangeError('empty');
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        // The era tells 1 BC (year 0 in the day strings) from AD 1.
        era: 'short',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
      });
    } catch (cause) {
      throw new Error(`invalid timezone: ${JSON.stringify(timezone)}`, { cause });
    }
    formatters.set(timezone, f);
  }
  return f;
}

type WallFields = Readonly<Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>>;

/** The last instant `wallFields` read, and its fields: a payment's day and hour are asked of the same instant in turn. */
let lastWall: { tsMs: number; timezone: string; fields: WallFields } | null = null;

/** Local wall-clock fields of instant `tsMs` in `timezone` (seconds precision, as zone offsets are). */
function wallFields(tsMs: number, timezone: string): WallFields {
  if (lastWall && lastWall.tsMs === tsMs && lastWall.timezone === timezone) return lastWall.fields;
  const fields = formatWallFields(tsMs, timezone);
  lastWall = { tsMs, timezone, fields };
  return fields;
}

/** `wallFields` from the zone's formatter (`formatToParts`). */
function formatWallFields(tsMs: number, timezone: string): WallFields {
  if (!Number.isFinite(tsMs)) throw new Error(`not an instant: ${tsMs}`);
  const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  let bc = false;
  for (const part of formatter(timezone).formatToParts(tsMs)) {
    if (part.type in out) out[part.type as keyof typeof out] = Number(part.value);
    else if (part.type === 'era') bc = part.value === 'BC';
  }
  // Astronomical years, as `Date` counts them: 1 BC is year 0.
  if (bc) out.year = 1 - out.year;
  return out;
}

/**
 * The local wall clock at `tsMs` written as if it were a UTC instant, so that
 * `wallMs(t) - t` is the zone's offset at `t`. The ms below the second are
 * carried over unchanged (every offset is a whole number of seconds).
 */
function wallMs(tsMs: number, timezone: string): number {
  const f = wallFields(tsMs, timezone);
  const sub = tsMs - Math.floor(tsMs / 1000) * 1000;
  return utcMs(f.year, f.month, f.day) + ((f.hour * 60 + f.minute) * 60 + f.second) * 1000 + sub;
}

/** The local date (`YYYY-MM-DD` in `timezone`, an IANA name) of the instant `tsMs` (ms since the epoch). */
export function localDay(tsMs: number, timezone: string): string {
  const f = wallFields(tsMs, timezone);
  return formatDay(f.year, f.month, f.day);
}

/**
 * The local wall-clock hour (`YYYY-MM-DDTHH` in `timezone`) of the instant
 * `tsMs`. Where clocks fall back, the repeated hour is one hour here (both of
 * its instants carry the same label); where they spring forward, the skipped
 * hour has no instant at all.
 */
export function localHour(tsMs: number, timezone: string): string {
  const f = wallFields(tsMs, timezone);
  return `${formatDay(f.year, f.month, f.day)}T${pad(f.hour, 2)}`;
}

const HOUR_MS = 3_600_000;

/**
 * The wall-clock hours of local day `day` in `timezone`, in order, as
 * `localHour` labels them: 24 on most days, 23 on the day clocks spring
 * forward, 24 on the day they fall back (the repeated hour once). Found by
 * stepping an hour at a time from the day's start, plus the last instant
 * before the next day, so zones with 30- and 45-minute offsets and shifts
 * come out right too.
 */
export function hoursOfDay(day: string, timezone: string): string[] {
  const start = dayStart(day, timezone);
  const end = dayStart(addDays(day, 1), timezone);
  const hours = new Set<string>();
  for (let t = start; t < end; t += HOUR_MS) hours.add(localHour(t, timezone));
  if (end > start) hours.add(localHour(end - 1, timezone));
  return [...hours].sort();
}

/**
 * The instant (ms since the epoch) at which local day `day` (`YYYY-MM-DD`)
 * starts in `timezone`: its local midnight, DST-correct (`docs/api.md` "Conventions", "Days and
 * ranges"). Where midnight happens twice (America/Havana falls back from 01:00
 * to 00:00) it is the first one. Where midnight is skipped (America/Havana,
 * Asia/Beirut, America/Santiago spring forward from 00:00 to 01:00) it is the
 * first instant of the day, i.e. the transition. A day that does not exist at
 * all (Pacific/Apia 2011-12-30) starts where the next one does, so it is empty.
 */
export function dayStart(day: string, timezone: string): number {
  const wallMidnight = toEpochDay(day) * DAY_MS;
  // `day` 00:00 on the wall clock, written as a UTC instant; the real instant
  // is that minus the offset in force then. Any transition near this day is
  // bracketed by the offsets a day either side, and the one in between covers
  // zones that changed twice in two days.
  const offsetAt = (t: number): number => wallMs(t, timezone) - t;
  const candidates = [...new Set([-DAY_MS, 0, DAY_MS].map((d) => wallMidnight - offsetAt(wallMidnight + d)))].sort(
    (a, b) => a - b,
  );
  const walls = candidates.map((t) => wallMs(t, timezone));
  const exact = candidates.find((_, i) => walls[i] === wallMidnight);
  if (exact !== undefined) return exact;

  // No instant reads 00:00: find the first one reading `day` 00:00 or later.
  // Wall time only moves forward across a skipped wallMidnight, so bisect between
  // the last candidate before it and the first after it.
  let lo = wallMidnight - 2 * DAY_MS;
  let hi = wallMidnight + 2 * DAY_MS;
  candidates.forEach((t, i) => {
    const w = walls[i] as number;
    if (w < wallMidnight) lo = Math.max(lo, t);
    else hi = Math.min(hi, t);
  });
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallMs(mid, timezone) >= wallMidnight) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The instants a range covers, half-open `[startMs, endMs)` in ms since the
 * epoch: from the start of `from` to the start of the day after `to`, in the
 * range's timezone. So a 23- or 25-hour DST day counts exactly.
 */
export function rangeBounds(range: DateRange): { startMs: number; endMs: number } {
  return { startMs: dayStart(range.from, range.timezone), endMs: dayStart(addDays(range.to, 1), range.timezone) };
}

/** `YYYY-MM` of a day. */
function monthOf(day: string): string {
  return day.slice(0, -3);
}

/** The first day of the month after `day`'s month. */
function nextMonthStart(day: string): string {
  const [y, m] = fields(day);
  return fromEpochDay(utcMs(y, m + 1, 1) / DAY_MS);
}

/** The first day of `day`'s month. */
function monthStart(day: string): string {
  return `${monthOf(day)}-01`;
}

/**
 * Splits the inclusive range `from`..`to` (`YYYY-MM-DD`, `from` ≤ `to`) into
 * the whole calendar months inside it (`months`: first and last `YYYY-MM`) and
 * the leftover days before (`headDays`) and after (`tailDays`) them, each an
 * inclusive `[from, to]` pair or null, so a reader takes monthly rollups for
 * the months and daily rollups for the rest. With no whole month inside, the
 * days of `from`'s month are the head and those of `to`'s month the tail.
 */
export function splitMonths(
  from: string,
  to: string,
): { headDays: [string, string] | null; months: [string, string] | null; tailDays: [string, string] | null } {
  if (isBefore(to, from)) throw new Error(`range ends before it starts: ${from}..${to}`);
  // First day of the first whole month, and last day of the last whole month.
  const wholeFrom = from === monthStart(from) ? from : nextMonthStart(from);
  const wholeTo = addDays(to, 1) === nextMonthStart(to) ? to : addDays(monthStart(to), -1);

  if (!isBefore(wholeTo, wholeFrom)) {
    return {
      headDays: from === wholeFrom ? null : [from, addDays(wholeFrom, -1)],
      months: [monthOf(wholeFrom), monthOf(wholeTo)],
      tailDays: to === wholeTo ? null : [addDays(wholeTo, 1), to],
    };
  }
  if (monthOf(from) === monthOf(to)) return { headDays: [from, to], months: null, tailDays: null };
  // Two neighbouring partial months.
  return { headDays: [from, addDays(wholeFrom, -1)], months: null, tailDays: [wholeFrom, to] };
}

/** Builds the resolved range and the `previous` one: the same number of days, ending the day before `from` (`docs/api.md` "Overview"). */
function resolved(from: string, to: string, timezone: string, name: RangeName | 'custom'): ResolvedRange {
  const days = daysBetween(from, to);
  return {
    range: { from, to, timezone },
    previous: { from: addDays(from, -days), to: addDays(from, -1), timezone },
    days,
    name,
  };
}

/** Validates one explicit date parameter. */
function explicitDay(parameter: 'from' | 'to', value: string): string {
  if (!isValidDay(value)) throw new BadParameterError(parameter, 'must be a date YYYY-MM-DD');
  return value;
}

/**
 * Resolves the range query parameters of a report (`docs/api.md` "Ranges") into local days
 * in the site's `timezone` (IANA), given `now` (ms since the epoch) and the
 * site's first tracked day `firstDay` (`YYYY-MM-DD`, null when nothing is
 * tracked yet). Every invalid parameter is a `BadParameterError` (400); an
 * invalid `timezone` or `firstDay` is a programming error (plain Error).
 *
 * Rules:
 * - `from`/`to` win over `range` (`docs/api.md` "Ranges"). When either is present `range` is
 *   not looked at, so even an unknown `range` is ignored. Both are required
 *   together (the missing one is named), strict `YYYY-MM-DD` real dates, `from`
 *   ≤ `to`. Future days are allowed; they are just empty.
 * - Explicit ranges are at most 10 years (`docs/api.md` "Limits"): `from` must be on or after
 *   the day after the same date 10 years before `to` (a leap day going back to
 *   February 28), the rule `12m` uses for one year. So 2016-01-01..2025-12-31 is
 *   allowed and ..2026-01-01 is not; 2024-02-29..2034-02-28 is allowed; 3652 or
 *   3653 days at most.
 * - `range` names a range ending today, the local day of `now` (see `RANGE_FROM`).
 *   An empty `range=` is not a range name and is rejected like any other.
 * - No parameters: `30d`, or `all` when the site has been tracked for 30 days
 *   or fewer (no first day, or a first day on or after today − 29).
 * - `all` has no length limit: the 10-year limit is on explicit ranges (`docs/api.md` "Limits").
 */
export function resolveRange(
  query: RangeQuery,
  ctx: { now: number; timezone: string; firstDay: string | null },
): ResolvedRange {
  const { timezone, firstDay } = ctx;
  if (firstDay !== null && !isValidDay(firstDay))
    throw new Error(`invalid first tracked day: ${JSON.stringify(firstDay)}`);
  const today = localDay(ctx.now, timezone);

  if (query.from !== undefined || query.to !== undefined) {
    if (query.to === undefined) throw new BadParameterError('to', 'is required when from is given');
    if (query.from === undefined) throw new BadParameterError('from', 'is required when to is given');
    const from = explicitDay('from', query.from);
    const to = explicitDay('to', query.to);
    if (isBefore(to, from)) throw new BadParameterError('from', 'must not be after to');
    if (isBefore(from, addDays(addYears(to, -MAX_EXPLICIT_YEARS), 1))) {
      throw new BadParameterError('to', `must be at most ${MAX_EXPLICIT_YEARS} years after from`);
    }
    return resolved(from, to, timezone, 'custom');
  }

  const name = query.range === undefined ? defaultRange(today, firstDay) : rangeName(query.range);
  return resolved(RANGE_FROM[name](today, firstDay), today, timezone, name);
}

/** The range name when the query gives none (`docs/api.md` "Ranges"). */
function defaultRange(today: string, firstDay: string | null): RangeName {
  return firstDay === null || daysBetween(firstDay, today) <= NEW_SITE_DAYS ? 'all' : DEFAULT_RANGE;
}

function rangeName(value: string): RangeName {
  if (!(RANGE_NAMES as readonly string[]).includes(value))
    throw new BadParameterError('range', `must be one of ${RANGE_NAMES.join(', ')}`);
  return value as RangeName;
}
