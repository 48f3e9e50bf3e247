import { describe, expect, it } from 'vitest';
import { minorUnitExponent, normalizeCurrency, rescaleMinor, toMajor } from '../../lambdas/domain/payments/currency.js';

describe('minorUnitExponent (ISO 4217 list one)', () => {
  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['GBP', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['ISK', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['TND', 3],
    ['CLF', 4],
    ['UYW', 4],
    ['MGA', 2],
  ])('%s has %i decimals', (code, exponent) => {
    expect(minorUnitExponent(code)).toBe(exponent);
  });

  it('covers every code whose minor unit is not 2', () => {
    const three = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
    const zero = [
      'BIF',
      'CLP',
      'DJF',
      'GNF',
      'ISK',
      'JPY',
      'KMF',
      'KRW',
      'PYG',
      'RWF',
      'UGX',
      'UYI',
      'VND',
      'VUV',
      'XAF',
      'XOF',
      'XPF',
    ];
    expect(three.map(minorUnitExponent)).toStrictEqual(three.map(() => 3));
    expect(zero.map(minorUnitExponent)).toStrictEqual(zero.map(() => 0));
    expect(['CLF', 'UYW'].map(minorUnitExponent)).toStrictEqual([4, 4]);
  });

  it('ignores case and whitespace, and takes an unknown code as 2', () => {
    expect(minorUnitExponent('jpy')).toBe(0);
    expect(minorUnitExponent(' kwd ')).toBe(3);
    expect(minorUnitExponent('XYZ')).toBe(2);
    expect(normalizeCurrency(' usd')).toBe('USD');
  });
});

describe('toMajor', () => {
  it.each([
    [1999, 'USD', 19.99],
    [1005, 'USD', 10.05],
    [5000, 'JPY', 5000],
    [5000, 'jpy', 5000],
    [1250, 'KWD', 1.25],
    [1, 'KWD', 0.001],
    [12345, 'CLF', 1.2345],
    [0, 'EUR', 0],
  ])('%i minor units of %s = %d', (minor, code, major) => {
    expect(toMajor(minor, code)).toBe(major);
  });
});

describe('rescaleMinor', () => {
  it('moves an amount between decimal places, rounding when digits are dropped', () => {
    expect(rescaleMinor(500_000, 2, 0)).toBe(5000);
    expect(rescaleMinor(500_050, 2, 0)).toBe(5001);
    expect(rescaleMinor(20_000, 0, 2)).toBe(2_000_000);
    expect(rescaleMinor(4900, 2, 2)).toBe(4900);
  });
});
