import { describe, expect, it } from 'vitest';
import {
  countryName,
  formatAgo,
  formatChange,
  formatCompact,
  formatDuration,
  formatMinor,
  formatPercent,
  formatUsd,
  formatUsdAxis,
  formatUsdOrDash,
  plural,
} from '../../app/src/format.js';

describe("the app's number formats", () => {
  it.each([
    [0.25, '↑ 25%'],
    [-0.031, '↓ 3.1%'],
    [0, '± 0%'],
    [null, null],
    [undefined, null],
  ])('change %s → %s', (change, text) => {
    expect(formatChange(change)).toBe(text);
  });

  it.each([
    [2500, 'USD', '$25.00'],
    [2500, 'EUR', '€25.00'],
    // ISO 4217 exponents: JPY has none, KWD three
    [2500, 'JPY', '¥2,500'],
    [2500, 'KWD', 'KWD 2.500'],
  ])('%i minor units of %s → %s', (amount, currency, text) => {
    expect(formatMinor(amount, currency).replace(/\u00a0/g, ' ')).toBe(text);
  });

  it('formats counts, money, ratios, nulls', () => {
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsdOrDash(null)).toBe('—');
    expect(formatPercent(0.0123)).toBe('1.2%');
    expect(formatPercent(null)).toBe('—');
    expect(formatCompact(9999)).toBe('9,999');
    expect(formatCompact(123_456)).toBe('123.5K');
    expect(formatUsdAxis(300)).toBe('$300');
    expect(formatUsdAxis(25_000)).toBe('$25K');
    expect([plural(1, 'payment'), plural(0, 'payment'), plural(1200, 'visit')]).toEqual([
      '1 payment',
      '0 payments',
      '1,200 visits',
    ]);
  });

  it('formats durations and ages', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(200)).toBe('3 min 20 s');
    expect(formatDuration(3900)).toBe('1 h 5 min');
    const now = Date.UTC(2026, 2, 9, 12);
    expect(formatAgo(null, now)).toBe('never');
    expect(formatAgo(new Date(now - 90_000).toISOString(), now)).toBe('1 minute ago');
    expect(formatAgo(new Date(now - 3 * 86_400_000).toISOString(), now)).toBe('3 days ago');
  });

  it('names countries', () => {
    expect(countryName('DE')).toBe('Germany');
    expect(countryName(null)).toBe('(none)');
  });
});
