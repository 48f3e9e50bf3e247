import { describe, expect, it } from 'vitest';
import { propKeyRows, type PropKeyCounts } from '../../lambdas/domain/reports/prop-keys.js';

const counts = (visitors: number, visits: number, payments = 0, cents = 0): PropKeyCounts => ({
  visitors,
  visits,
  payments,
  cents,
});

describe('the properties report rows (docs/api.md "Properties")', () => {
  it('orders keys by visitors, then visits, then the key by code units, and limits them after counting', () => {
    const keys = new Map<string, PropKeyCounts>([
      ['plan', counts(5, 7, 2, 12_345)],
      ['b', counts(3, 4)],
      ['a', counts(3, 4)],
      ['B', counts(3, 4)],
      ['__proto__', counts(3, 6)],
      ['author', counts(9, 9)],
    ]);
    expect(propKeyRows(keys, 1000).rows.map((r) => r.key)).toEqual(['author', 'plan', '__proto__', 'B', 'a', 'b']);
    const top = propKeyRows(keys, 2);
    expect(top.total).toBe(6);
    expect(top.rows).toEqual([
      { key: 'author', visitors: 9, visits: 9, payments: 0, revenue_usd: 0 },
      { key: 'plan', visitors: 5, visits: 7, payments: 2, revenue_usd: 123.45 },
    ]);
  });

  it('lists a key of payments alone (credited to visits before the range), as a breakdown lists such a value, and drops an empty one', () => {
    const keys = new Map([
      ['old', counts(0, 0, 1, 100)],
      ['empty', counts(0, 0)],
    ]);
    expect(propKeyRows(keys, 10)).toEqual({
      total: 1,
      rows: [{ key: 'old', visitors: 0, visits: 0, payments: 1, revenue_usd: 1 }],
    });
  });
});
