import * as z from 'zod';
import data from '../../../data/fx/usd-rates.json' with { type: 'json' };
import { minorUnitExponent, normalizeCurrency } from './currency.js';
import { dict } from '../dict.js';

/**
 * A dated USD rate table (`docs/payments.md` "Money": USD from the provider's own
 * conversion when it gives one, else from a dated rate table). `rates` maps a
 * day (`YYYY-MM-DD`) to the USD value of one unit of each currency on that
 * day; USD itself is implied (1). A table is a value: never mutate one after
 * its first lookup (lookups index it once, by identity).
 */
export interface FxTable {
  rates: Record<string, Record<string, number>>;
}

/**
 * The table shipped with the code: ECB euro reference rates turned into USD
 * per unit, one day per month (the first ECB business day) from January 2023
 * (`data/fx/usd-rates.json`, sources in `data/fx/SOURCES.md`). Refreshed or
 * refined by overrides in DynamoDB (`footfall fx update`).
 */
export const BUNDLED_FX: FxTable = { rates: data.rates };

/** Thrown for a rate file that is neither a valid ECB history CSV nor our JSON; the message is one line. */
export class FxFormatError extends Error {}

const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'must be an upper-case ISO 4217 code such as EUR');

/** Our JSON format: `{ source?, unit?, rates: { "YYYY-MM-DD": { "EUR": 1.1634, … } } }`. */
export const fxTableSchema = z.object({
  source: z.string().optional(),
  unit: z.string().optional(),
  rates: z.record(z.iso.date(), z.record(currencyCode, z.number().positive())),
});

interface Series {
  days: string[];
  rates: number[];
}

const indexes = new WeakMap<FxTable, Map<string, Series>>();

/** Per currency, its days in order and the rate of each: a currency missing on a day does not hide its earlier rates. */
function seriesOf(table: FxTable, code: string): Series | undefined {
  let index = indexes.get(table);
  if (!index) {
    index = new Map();
    for (const day of Object.keys(table.rates).sort()) {
      for (const [currency, rate] of Object.entries(table.rates[day] ?? {})) {
        if (!(rate > 0 && Number.isFinite(rate))) continue;
        let series = index.get(currency);
        if (!series) index.set(currency, (series = { days: [], rates: [] }));
        series.days.push(day);
        series.rates.push(rate);
      }
    }
    indexes.set(table, index);
  }
  return index.get(code);
}

/**
 * The rate of `currency` in force on `day` (`YYYY-MM-DD`; a longer ISO
 * timestamp is cut to its date) and the table day it comes from: the latest
 * table day on or before `day` that lists the currency; for a day before the
 * currency's first table day, that first day. `USD` is 1 from no table day
 * (`since` null); a currency the table does not know is null. Case-insensitive.
 */
export function rateInForce(
  table: FxTable,
  currency: string,
  day: string,
): { rate: number; since: string | null } | null {
  const code = normalizeCurrency(currency);
  if (code === 'USD') return { rate: 1, since: null };
  const series = seriesOf(table, code);
  if (!series) return null;
  const key = day.slice(0, 10);
  let lo = 0;
  let hi = series.days.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (series.days[mid]! <= key) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return { rate: series.rates[found]!, since: series.days[found]! };
}

/**
 * USD per one unit of `currency` in force on `day` (`YYYY-MM-DD`): the rate
 * of the latest table day on or before `day` that lists the currency; before
 * the currency's first table day, that first day's rate. `USD` is 1; a
 * currency the table does not know is null. Case-insensitive.
 */
export function usdPerUnit(table: FxTable, currency: string, day: string): number | null {
  return rateInForce(table, currency, day)?.rate ?? null;
}

/** `usdPerUnit` bound to a table: the `UsdRate` shape of `money.ts`. */
export function usdRateOf(table: FxTable): (currency: string, day: string) => number | null {
  return (currency, day) => usdPerUnit(table, currency, day);
}

/** Rounds half away from zero, and never gives -0. */
function roundHalfAway(x: number): number {
  const r = Math.sign(x) * Math.round(Math.abs(x));
  return r === 0 ? 0 : r;
}

/**
 * An amount in the currency's minor units (ISO 4217 exponent: JPY 0, EUR 2,
 * KWD 3) as USD on `day`, rounded to cents: `toUsd(1999, 'EUR', day, t)` =
 * 19.99 × USD per EUR. Null when the table does not know the currency.
 * Negative amounts (refunds) round symmetrically.
 */
export function toUsd(minorAmount: number, currency: string, day: string, table: FxTable): number | null {
  const rate = usdPerUnit(table, currency, day);
  if (rate === null) return null;
  const exponent = minorUnitExponent(currency);
  const cents = exponent <= 2 ? minorAmount * rate * 10 ** (2 - exponent) : (minorAmount * rate) / 10 ** (exponent - 2);
  return roundHalfAway(cents) / 100;
}

/**
 * `base` with `override` laid over it: days of either, and on a day both
 * have, the override's rate for each currency it lists (the base's for the
 * others).
 */
export function mergeTables(base: FxTable, override: FxTable): FxTable {
  const days = [...new Set([...Object.keys(base.rates), ...Object.keys(override.rates)])].sort();
  const rates = dict<Record<string, number>>();
  for (const day of days) rates[day] = { ...base.rates[day], ...override.rates[day] };
  return { rates };
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** `2026-04-13` (eurofxref-hist.csv) or `13 April 2026` (eurofxref.csv, the single-day file) as `YYYY-MM-DD`. */
function ecbDay(cell: string): string | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(cell)) return cell;
  const m = /^(\d{1,2}) ([A-Za-z]+) (\d{4})$/.exec(cell);
  const month = m ? MONTHS.indexOf(m[2]!.toLowerCase()) : -1;
  if (!m || month < 0) return null;
  return `${m[3]}-${String(month + 1).padStart(2, '0')}-${m[1]!.padStart(2, '0')}`;
}

/** Significant digits kept of a derived rate (the ECB publishes 5 or 6). */
const DERIVED_DIGITS = 8;

/**
 * The ECB's euro reference rates in their CSV form (`Date,USD,JPY,…`, one row
 * per day, each cell the units of that currency per 1 EUR, `N/A` or empty
 * when not quoted; eurofxref-hist.csv or the single-day eurofxref.csv) as USD
 * per unit: EUR = the USD cell, any other currency = USD cell ÷ its cell,
 * kept to 8 significant digits.
 * @throws FxFormatError naming the line of the first problem
 */
export function parseEcbCsv(text: string): FxTable {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const header = (lines[0] ?? '').split(',').map((c) => c.trim());
  if (header[0]?.toLowerCase() !== 'date')
    throw new FxFormatError('not an ECB rate CSV: the first column must be Date');
  const usdColumn = header.indexOf('USD');
  if (usdColumn < 0) throw new FxFormatError('not an ECB rate CSV: no USD column');
  header.forEach((code, i) => {
    if (i > 0 && code !== '' && !/^[A-Z]{3}$/.test(code))
      throw new FxFormatError(`line 1: "${code}" is not a currency code`);
  });
  const rates = dict<Record<string, number>>();
  for (let n = 1; n < lines.length; n++) {
    const cells = lines[n]!.split(',').map((c) => c.trim());
    const day = ecbDay(cells[0] ?? '');
    if (!day || !z.iso.date().safeParse(day).success)
      throw new FxFormatError(`line ${n + 1}: "${cells[0]}" is not a date`);
    if (rates[day]) throw new FxFormatError(`line ${n + 1}: ${day} appears twice`);
    const perEur = (i: number): number | null => {
      const cell = cells[i] ?? '';
      if (cell === '' || cell.toUpperCase() === 'N/A') return null;
      const value = /^\d+(\.\d+)?$/.test(cell) ? Number(cell) : NaN;
      if (!(value > 0)) throw new FxFormatError(`line ${n + 1}: ${header[i]} "${cell}" is not a rate`);
      return value;
    };
    const usdPerEur = perEur(usdColumn);
    if (usdPerEur === null) throw new FxFormatError(`line ${n + 1}: no USD rate on ${day}`);
    const row: Record<string, number> = { EUR: usdPerEur };
    header.forEach((code, i) => {
      if (i === 0 || i === usdColumn || code === '') return;
      const value = perEur(i);
      if (value !== null) row[code] = Number((usdPerEur / value).toPrecision(DERIVED_DIGITS));
    });
    rates[day] = row;
  }
  if (Object.keys(rates).length === 0) throw new FxFormatError('no rates in the file');
  return { rates };
}

/**
 * A rate file in either format: our JSON (`fxTableSchema`) or the ECB CSV
 * (`parseEcbCsv`), told apart by a leading `{`.
 * @throws FxFormatError with a one-line message
 */
export function parseFxFile(text: string): FxTable {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return parseEcbCsv(trimmed);
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch (error) {
    throw new FxFormatError(`not valid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const result = fxTableSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new FxFormatError(`${issue?.path.join('.') || 'file'}: ${issue?.message ?? 'invalid'}`);
  }
  if (Object.keys(result.data.rates).length === 0) throw new FxFormatError('no rates in the file');
  return { rates: result.data.rates };
}
