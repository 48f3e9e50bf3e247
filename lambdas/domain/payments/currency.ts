/**
 * ISO 4217 minor units: how many decimal digits a currency's minor unit has
 * (`docs/payments.md` "Money": amounts are kept in the minor unit, JPY 0, KWD 3).
 *
 * Source: ISO 4217 "List one: Currency, fund and precious metal codes",
 * column "Minor unit", as published by SIX, the ISO 4217 maintenance agency
 * (https://www.six-group.com/en/products-services/financial-information/data-standards.html,
 * list-one.xml). Only the codes whose minor unit is not 2 are listed; every
 * other code, known or not, is taken as 2. Codes with no minor unit ("N.A.":
 * precious metals, XDR, test codes) are not currencies anyone is paid in and
 * fall back to 2 as well.
 */
const EXPONENTS_OTHER_THAN_TWO: Readonly<Record<string, number>> = {
  // Three decimals (fils, baisa, dirham, millime).
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  // No minor unit in use.
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // Units of account with four decimals (Unidad de Fomento, Unidad Previsional).
  CLF: 4,
  UYW: 4,
};

/** The ISO 4217 code in upper case, as stored on payments (`PaymentFact.currency`). */
export function normalizeCurrency(code: string): string {
  return code.trim().toUpperCase();
}

/**
 * Decimal digits of the currency's minor unit per ISO 4217: JPY 0, USD 2,
 * KWD 3, CLF 4. Case-insensitive; an unknown code gives 2.
 */
export function minorUnitExponent(code: string): number {
  return EXPONENTS_OTHER_THAN_TWO[normalizeCurrency(code)] ?? 2;
}

/**
 * An amount in minor units as a decimal number of major units:
 * `toMajor(1999, 'USD')` = 19.99, `toMajor(500, 'JPY')` = 500,
 * `toMajor(1250, 'KWD')` = 1.25. Rounded to the exponent's digits so that
 * binary floating point does not leak (`toMajor(1005, 'USD')` is 10.05, not
 * 10.049999…).
 */
export function toMajor(minor: number, code: string): number {
  const exponent = minorUnitExponent(code);
  return Number((minor / 10 ** exponent).toFixed(exponent));
}

/**
 * Re-expresses an integer amount given with `fromExponent` decimals in
 * `toExponent` decimals, rounding to the nearest unit when digits are dropped.
 * For providers whose API minor unit differs from ISO 4217 for a currency
 * (Stripe keeps ISK with 2 decimals and MGA with 0).
 */
export function rescaleMinor(amount: number, fromExponent: number, toExponent: number): number {
  if (fromExponent === toExponent) return amount;
  return toExponent > fromExponent
    ? amount * 10 ** (toExponent - fromExponent)
    : Math.round(amount / 10 ** (fromExponent - toExponent));
}
