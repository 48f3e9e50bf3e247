/**
 * Number formatting for the app: counts, USD, ratios, changes, times. One
 * place, so a figure reads the same on every page. Shown values are rounded
 * for reading; titles carry the exact value the API gave.
 */

const count = new Intl.NumberFormat('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const usdWhole = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
const usdCompact = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  notation: 'compact',
  minimumFractionDigits: 0,
  maximumFractionDigits: 1,
});
const pct = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

/** An integer count: 12,345. */
export const formatCount = (n: number): string => count.format(n);

/** `1 visit`, `2 visits`: a count with its noun, English plural by `s`. */
export const plural = (n: number, noun: string): string => `${count.format(n)} ${noun}${n === 1 ? '' : 's'}`;

/** A count for tight places: 12.3K under a million is still exact below 10,000. */
export const formatCompact = (n: number): string => (Math.abs(n) < 10_000 ? count.format(n) : compact.format(n));

/** USD with cents: $1,234.50. */
export const formatUsd = (n: number): string => usd.format(n);

/** USD for headlines: $1,235, or $12.3K from $100,000 on. */
export const formatUsdShort = (n: number): string =>
  Math.abs(n) >= 100_000 ? usdCompact.format(n) : Math.abs(n) >= 1000 ? usdWhole.format(n) : usd.format(n);

/** A ratio as a percentage (0.0123 → 1.2%); null → an em dash. */
export const formatPercent = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : pct.format(n);

const ratio2 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
/** A ratio such as views per visit to two decimals, or an em dash for null. */
export const formatRatio = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : ratio2.format(n);

/** USD or an em dash for null (revenue per visitor before any payment is matched). */
export const formatUsdOrDash = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : usd.format(n);

/** A relative change (`docs/api.md` "Overview": 0.25 is 25% more) as "↑ 25%", "↓ 3.1%", "± 0%", or null when the API gives none. */
export function formatChange(change: number | null | undefined): string | null {
  if (change === null || change === undefined) return null;
  const sign = change > 0 ? '↑' : change < 0 ? '↓' : '±';
  return `${sign} ${pct.format(Math.abs(change))}`;
}

/**
 * An amount in a currency's minor units (`docs/api.md` "Payments") in that currency: the
 * exponent comes from Intl's own ISO 4217 data (JPY 0 decimals, KWD 3).
 */
export function formatMinor(amount: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
    return f.format(amount / 10 ** digits);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

const dateTime = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});
const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** An RFC 3339 time in the viewer's timezone: "9 Mar 2026, 14:05". */
export const formatDateTime = (ts: string | null | undefined): string => (ts ? dateTime.format(new Date(ts)) : '—');

/** Clock time of an RFC 3339 time in the viewer's timezone: "14:05:09". */
export const formatTime = (ts: string): string => time.format(new Date(ts));

/** Seconds as "45 s", "3 min 20 s", "1 h 5 min"; null → "—". */
export function formatDuration(secs: number | null | undefined): string {
  if (secs === null || secs === undefined) return '—';
  if (secs < 60) return `${secs} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min${secs % 60 ? ` ${secs % 60} s` : ''}`;
  return `${Math.floor(secs / 3600)} h${Math.floor((secs % 3600) / 60) ? ` ${Math.floor((secs % 3600) / 60)} min` : ''}`;
}

/** "3 minutes ago", "2 days ago": for last-used and last-event dates. */
export function formatAgo(ts: string | null | undefined, now = Date.now()): string {
  if (!ts) return 'never';
  const secs = Math.max(0, Math.round((now - new Date(ts).getTime()) / 1000));
  const units: Array<[number, string]> = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (secs >= size) {
      const n = Math.floor(secs / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}

/** Country code → name in English ("DE" → "Germany"); the code itself when unknown. */
const regions = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null;
export function countryName(code: string | null | undefined): string {
  if (!code) return '(none)';
  try {
    return regions?.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** USD on a chart axis: whole dollars, compact from $10,000 on. */
export const formatUsdAxis = (n: number): string => (Math.abs(n) >= 10_000 ? usdCompact.format(n) : usdWhole.format(n));

/** A BCP 47 language tag → its English name ("en-US" → "American English", "de" → "German"); the tag itself when unknown or malformed. */
const languages =
  typeof Intl.DisplayNames === 'function'
    ? new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' })
    : null;
export function languageName(tag: string): string {
  try {
    return languages?.of(tag) ?? tag;
  } catch {
    return tag;
  }
}
