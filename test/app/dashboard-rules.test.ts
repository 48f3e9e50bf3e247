import { describe, expect, it } from 'vitest';
import type { BreakdownRow } from '../../app/src/api.js';
import { barShare, orderRows } from '../../app/src/components/breakdown-rows.js';
import { localNow, pastOrNull } from '../../app/src/components/chart-points.js';
import { tabKeyTarget } from '../../app/src/components/tab-keys.js';
import { attachmentName, withoutHeader } from '../../app/src/export.js';
import { languageName } from '../../app/src/format.js';

const row = (key: string | null, visitors: number, revenue: number, unattributed = false): BreakdownRow => ({
  key,
  label: key ?? '(none)',
  unattributed,
  visitors,
  payments: revenue > 0 ? 1 : 0,
  customers: revenue > 0 ? 1 : 0,
  revenue_usd: revenue,
  revenue_per_visitor: unattributed ? null : visitors ? revenue / visitors : null,
});

/** The API's order (revenue, then visits), as `docs/api.md` "Reports" gives it, with the no-value and Unattributed rows mid-list. */
const API_ROWS = [
  row('Search', 691, 487),
  row(null, 900, 300),
  row('Email', 150, 330),
  row(null, 0, 29, true),
  row('Social', 194, 0),
];

describe('breakdown rows on screen', () => {
  it('sort by the chosen column, keep the no-value and Unattributed rows at the bottom, and size bars by that column', () => {
    expect(orderRows(API_ROWS, 'revenue_usd').map((r) => r.key ?? (r.unattributed ? 'U' : 'none'))).toEqual([
      'Search',
      'Email',
      'Social',
      'none',
      'U',
    ]);
    expect(orderRows(API_ROWS, 'visitors').map((r) => r.key ?? (r.unattributed ? 'U' : 'none'))).toEqual([
      'Search',
      'Social',
      'Email',
      'none',
      'U',
    ]);
    // The bar is a share of the largest value of the sorted column among real values (not the 900 of no value).
    expect(barShare(API_ROWS[0]!, API_ROWS, 'visitors')).toBe(1);
    expect(barShare(API_ROWS[2]!, API_ROWS, 'revenue_usd')).toBeCloseTo(330 / 487);
    expect(barShare(API_ROWS[3]!, API_ROWS, 'revenue_usd')).toBe(0);
    expect(barShare(API_ROWS[1]!, API_ROWS, 'visitors')).toBe(0);
  });

  it('tab keys wrap with the arrows and jump with Home and End (WAI-ARIA APG tabs)', () => {
    expect([tabKeyTarget('ArrowRight', 3, 4), tabKeyTarget('ArrowLeft', 0, 4)]).toEqual([0, 3]);
    expect([tabKeyTarget('Home', 2, 4), tabKeyTarget('End', 0, 4), tabKeyTarget('a', 0, 4)]).toEqual([0, 3, null]);
  });

  it('names languages, keeping an unknown tag as it is', () => {
    expect(languageName('en-US')).toBe('American English');
    expect(languageName('de')).toBe('German');
    expect(languageName('not a tag!')).toBe('not a tag!');
  });
});

describe("the chart's clock", () => {
  it("cuts the points after the site's current local hour, day or month", () => {
    // 2026-11-26 22:52 UTC is 23:52 in Berlin and 17:52 in New York.
    const now = Date.UTC(2026, 10, 26, 22, 52);
    expect(localNow(now, 'Europe/Berlin', 'hour')).toBe('2026-11-26T23:00');
    expect(localNow(now, 'America/New_York', 'hour')).toBe('2026-11-26T17:00');
    expect(localNow(now, 'Pacific/Kiritimati', 'day')).toBe('2026-11-27');
    expect(localNow(now, 'UTC', 'month')).toBe('2026-11');
    const cut = localNow(now, 'America/New_York', 'hour');
    expect(pastOrNull('2026-11-26T17:00', 4, cut)).toBe(4);
    expect(pastOrNull('2026-11-26T18:00', 0, cut)).toBeNull();
    expect(pastOrNull('2026-11-25', 3, localNow(now, 'UTC', 'day'))).toBe(3);
    expect(pastOrNull('2026-12', 0, localNow(now, 'UTC', 'month'))).toBeNull();
  });
});

describe('the whole-report CSV', () => {
  it("drops each later page's header line, and keeps the server's file name", () => {
    expect(withoutHeader('a,b\r\n1,"x\r\ny"\r\n')).toBe('1,"x\r\ny"\r\n');
    expect(withoutHeader('a,b\r\n')).toBe('');
    expect(attachmentName('attachment; filename="s-payments-all-2026-01-01-to-2026-01-31.csv"', 'f.csv')).toBe(
      's-payments-all-2026-01-01-to-2026-01-31.csv',
    );
    expect(attachmentName(null, 'f.csv')).toBe('f.csv');
  });
});
