import { describe, expect, it } from 'vitest';
import {
  BUNDLED_FX,
  FxFormatError,
  fxTableSchema,
  mergeTables,
  parseEcbCsv,
  parseFxFile,
  rateInForce,
  toUsd,
  usdPerUnit,
  usdRateOf,
  type FxTable,
} from '../../lambdas/domain/payments/fx.js';

// Rows of the ECB's eurofxref-hist.csv, copied unchanged (data/fx/SOURCES.md).
const ECB_HEADER =
  'Date,USD,JPY,BGN,CYP,CZK,DKK,EEK,GBP,HUF,LTL,LVL,MTL,PLN,ROL,RON,SEK,SIT,SKK,CHF,ISK,NOK,HRK,RUB,TRL,TRY,AUD,BRL,CAD,CNY,HKD,IDR,ILS,INR,KRW,MXN,MYR,NZD,PHP,SGD,THB,ZAR,';
const ECB_2024_07_01 =
  '2024-07-01,1.0745,173.15,1.9558,N/A,25.048,7.4586,N/A,0.8479,394.25,N/A,N/A,N/A,4.3008,N/A,4.9766,11.3675,N/A,N/A,0.9689,148.9,11.4315,N/A,N/A,N/A,35.1126,1.6109,6.0016,1.4711,7.8097,8.3945,17569,4.0304,89.6575,1485.41,19.7315,5.0641,1.7638,62.998,1.4567,39.434,19.5015,';
const ECB_2026_04_13 =
  '2026-04-13,1.1684,186.75,N/A,N/A,24.378,7.4727,N/A,0.87058,366.9,N/A,N/A,N/A,4.2543,N/A,5.092,10.892,N/A,N/A,0.9242,143.2,11.098,N/A,N/A,N/A,52.2478,1.661,5.874,1.6177,7.9827,9.1507,20082.05,3.5787,109.047,1740.86,20.3203,4.6444,2.0081,70.356,1.4912,37.728,19.3849,';

describe('the bundled USD rate table', () => {
  const days = Object.keys(BUNDLED_FX.rates).sort();

  it('is valid and has one day per month from 2023-01', () => {
    expect(fxTableSchema.safeParse(BUNDLED_FX).success).toBe(true);
    expect(days[0]).toBe('2023-01-02');
    const months = days.map((d) => d.slice(0, 7));
    expect(new Set(months).size).toBe(days.length);
    expect(months.slice(0, 3)).toEqual(['2023-01', '2023-02', '2023-03']);
    expect(days.at(-1)! >= '2026-04-01').toBe(true);
  });

  it('lists EUR and the ECB currencies (BGN until it joined the euro)', () => {
    const codes = Object.keys(BUNDLED_FX.rates['2025-12-01']!).sort();
    expect(codes).toHaveLength(30);
    expect(codes).toEqual(
      expect.arrayContaining(['EUR', 'GBP', 'JPY', 'CHF', 'AUD', 'CAD', 'BGN', 'INR', 'KRW', 'IDR']),
    );
    expect(BUNDLED_FX.rates['2026-01-02']!.BGN).toBeUndefined();
    expect(BUNDLED_FX.rates['2026-01-02']!.USD).toBeUndefined();
  });

  it('holds the ECB rows turned into USD per unit (2024-07-01: USD 1.0745, GBP 0.8479, JPY 173.15 per EUR)', () => {
    expect(BUNDLED_FX.rates['2024-07-01']).toMatchObject({ EUR: 1.0745, GBP: 1.2672485, JPY: 0.0062056021 });
    // The same parser rebuilds the same numbers from the source row.
    expect(parseEcbCsv(`${ECB_HEADER}\n${ECB_2024_07_01}\n`).rates['2024-07-01']).toEqual(
      BUNDLED_FX.rates['2024-07-01'],
    );
  });
});

describe('usdPerUnit', () => {
  it('gives the rate of an exact table day', () => {
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2024-07-01')).toBe(1.0745);
    expect(usdPerUnit(BUNDLED_FX, 'GBP', '2024-08-01')).toBe(1.279409);
  });

  it('gives the latest day on or before the day between table days', () => {
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2024-07-31')).toBe(1.0745);
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2024-08-01')).toBe(1.0789);
    expect(rateInForce(BUNDLED_FX, 'GBP', '2024-07-15')).toEqual({ rate: 1.2672485, since: '2024-07-01' });
  });

  it("gives the first day's rate before the first day, and the last one after the last", () => {
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2020-01-01')).toBe(1.0683);
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2023-01-01')).toBe(1.0683);
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2099-12-31')).toBe(
      BUNDLED_FX.rates[Object.keys(BUNDLED_FX.rates).sort().at(-1)!]!.EUR,
    );
  });

  it("keeps a currency's last rate on days that no longer list it (BGN after 2025-12-01)", () => {
    // 1.1646 USD per EUR ÷ 1.9558 BGN per EUR on 2025-12-01.
    expect(rateInForce(BUNDLED_FX, 'BGN', '2026-03-15')).toEqual({ rate: 0.59545966, since: '2025-12-01' });
  });

  it('is null for an unknown currency, 1 for USD, and case-insensitive', () => {
    expect(usdPerUnit(BUNDLED_FX, 'XYZ', '2024-07-01')).toBeNull();
    expect(usdPerUnit(BUNDLED_FX, 'KWD', '2024-07-01')).toBeNull(); // the ECB does not quote KWD
    expect(usdPerUnit(BUNDLED_FX, 'USD', '2024-07-01')).toBe(1);
    expect(usdPerUnit({ rates: {} }, 'usd', '2024-07-01')).toBe(1);
    expect(usdPerUnit(BUNDLED_FX, 'eur', '2024-07-01')).toBe(1.0745);
  });

  it('takes the date of a full ISO timestamp', () => {
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2024-07-31T23:59:59.999Z')).toBe(1.0745);
  });

  it('fits the UsdRate shape of money.ts', () => {
    expect(usdRateOf(BUNDLED_FX)('GBP', '2024-07-01')).toBe(1.2672485);
  });
});

describe('toUsd', () => {
  it('converts EUR and GBP cents to USD cents', () => {
    // €19.99 × 1.0745 = 21.479255
    expect(toUsd(1999, 'EUR', '2024-07-15', BUNDLED_FX)).toBe(21.48);
    // £49.00 × 1.2672485 = 62.0951765
    expect(toUsd(4900, 'GBP', '2024-07-01', BUNDLED_FX)).toBe(62.1);
    // £49.00 × 1.279409 (2024-08-01) = 62.691041
    expect(toUsd(4900, 'GBP', '2024-08-02', BUNDLED_FX)).toBe(62.69);
  });

  it('converts JPY, which has no minor unit', () => {
    // ¥5000 × 0.0062056021 = 31.0280105
    expect(toUsd(5000, 'JPY', '2024-07-01', BUNDLED_FX)).toBe(31.03);
  });

  it('converts KWD, which has three decimals', () => {
    // A test table (the ECB does not quote KWD): 12.345 KWD × 3.25 = 40.12125
    const table: FxTable = { rates: { '2024-07-01': { KWD: 3.25 } } };
    expect(toUsd(12345, 'KWD', '2024-07-01', table)).toBe(40.12);
    expect(toUsd(12345, 'KWD', '2024-07-01', BUNDLED_FX)).toBeNull();
  });

  it('passes USD through and rounds refunds symmetrically', () => {
    expect(toUsd(1999, 'USD', '2024-07-01', BUNDLED_FX)).toBe(19.99);
    expect(toUsd(-1999, 'EUR', '2024-07-15', BUNDLED_FX)).toBe(-21.48);
    expect(Object.is(toUsd(0, 'EUR', '2024-07-15', BUNDLED_FX), 0)).toBe(true);
  });

  it('is null for an unknown currency', () => {
    expect(toUsd(100, 'XYZ', '2024-07-01', BUNDLED_FX)).toBeNull();
  });
});

describe('mergeTables', () => {
  it('lays the override over the base, currency by currency', () => {
    const base: FxTable = { rates: { '2024-07-01': { EUR: 1.0745, GBP: 1.2672485 }, '2024-08-01': { EUR: 1.0789 } } };
    const override: FxTable = { rates: { '2024-07-01': { EUR: 1.1 }, '2024-07-15': { EUR: 1.2 } } };
    const merged = mergeTables(base, override);
    expect(merged.rates).toEqual({
      '2024-07-01': { EUR: 1.1, GBP: 1.2672485 },
      '2024-07-15': { EUR: 1.2 },
      '2024-08-01': { EUR: 1.0789 },
    });
    expect(Object.keys(merged.rates)).toEqual(['2024-07-01', '2024-07-15', '2024-08-01']);
    expect(usdPerUnit(merged, 'EUR', '2024-07-20')).toBe(1.2);
    expect(usdPerUnit(merged, 'GBP', '2024-07-20')).toBe(1.2672485);
    expect(base.rates['2024-07-01']!.EUR).toBe(1.0745);
  });
});

describe('parsing rate files', () => {
  it('reads the ECB history CSV: N/A cells skipped, USD per EUR ÷ currency per EUR', () => {
    const table = parseEcbCsv(`${ECB_HEADER}\r\n${ECB_2026_04_13}\r\n${ECB_2024_07_01}\r\n`);
    expect(Object.keys(table.rates).sort()).toEqual(['2024-07-01', '2026-04-13']);
    const day = table.rates['2026-04-13']!;
    expect(day.EUR).toBe(1.1684);
    expect(day.GBP).toBe(Number((1.1684 / 0.87058).toPrecision(8)));
    expect(day.BGN).toBeUndefined();
    expect(day.USD).toBeUndefined();
    expect(Object.keys(day)).toHaveLength(29);
  });

  it('reads the ECB single-day CSV (eurofxref.csv)', () => {
    const csv = 'Date, USD, JPY, GBP, \n13 April 2026, 1.1684, 186.75, 0.87058, \n';
    expect(parseEcbCsv(csv).rates).toEqual({ '2026-04-13': { EUR: 1.1684, JPY: 0.0062564926, GBP: 1.3420938 } });
  });

  it.each([
    ['Day,USD\n2024-07-01,1.07\n', /first column must be Date/],
    ['Date,JPY\n2024-07-01,173.15\n', /no USD column/],
    ['Date,USD,JPY\n2024-07-01,1.0745,abc\n', /line 2: JPY "abc" is not a rate/],
    ['Date,USD,JPY\n2024-07-01,1.0745,-1\n', /not a rate/],
    ['Date,USD\n2024-02-30,1.07\n', /line 2: "2024-02-30" is not a date/],
    ['Date,USD\n2024-07-01,1.07\n2024-07-01,1.08\n', /appears twice/],
    ['Date,USD\n2024-07-01,N/A\n', /no USD rate/],
    ['Date,USD\n', /no rates/],
  ])('rejects a bad ECB CSV: %j', (csv, message) => {
    expect(() => parseEcbCsv(csv)).toThrow(FxFormatError);
    expect(() => parseEcbCsv(csv)).toThrow(message);
  });

  it('reads our JSON format and rejects a bad one in one line', () => {
    expect(parseFxFile('{"rates":{"2024-07-01":{"EUR":1.0745}}}')).toEqual({
      rates: { '2024-07-01': { EUR: 1.0745 } },
    });
    expect(parseFxFile(`${ECB_HEADER}\n${ECB_2024_07_01}`).rates['2024-07-01']!.EUR).toBe(1.0745);
    for (const [text, message] of [
      ['{"rates":{"2024-07-01":{"EUR":-1}}}', /rates\.2024-07-01\.EUR/],
      ['{"rates":{"2024-07-01":{"eur":1}}}', /rates\.2024-07-01/],
      ['{"rates":{"July":{"EUR":1}}}', /rates\.July/],
      ['{"rates":{}}', /no rates/],
      ['{"rates":', /not valid JSON/],
    ] as const) {
      expect(() => parseFxFile(text)).toThrow(FxFormatError);
      expect(() => parseFxFile(text)).toThrow(message);
      try {
        parseFxFile(text);
      } catch (error) {
        expect((error as Error).message).not.toContain('\n');
      }
    }
  });
});
