import { describe, expect, it } from 'vitest';
import { monthlyBill } from '../../bench/cost-model.js';
import { stepGroup } from '../../bench/sessionize.js';

describe('the cost model of docs/cost.md', () => {
  it('prices DynamoDB from the measured units and bytes: doubling WRU doubles the write line and nothing else', () => {
    const base = { eventsPerMonth: 10_000_000, batch: 231, wru: 500, rru: 500, storedBytesPerEvent: 300 };
    const a = monthlyBill(base);
    const b = monthlyBill({ ...base, wru: 1000 });
    for (const [i, [name, usd]] of a.entries()) {
      if (name.startsWith('DynamoDB writes')) expect(b[i]?.[1]).toBeCloseTo(2 * usd, 10);
      else expect(b[i]?.[1], name).toBe(usd);
    }
    // 10M events × 500 WRU per 1,000 = 5M WRU at $0.625 per million on Standard, 25% more on Standard-IA.
    const writes = (tableClass: 'standard' | 'standard-ia') => monthlyBill(base, tableClass).find(([name]) => name.startsWith('DynamoDB writes'))?.[1];
    expect(writes('standard')).toBeCloseTo(3.125, 10);
    expect(writes('standard-ia')).toBeCloseTo(3.90625, 10);
  });
});

describe('sessionize cost shares', () => {
  it.each([
    ['visits.visitsAround', 'visits'],
    ['visits.writeVisits', 'visits'],
    ['rollups.compact', 'rollups'],
    ['rollups.apply', 'rollups'],
    ['recredit', 're-credit'],
    ['markers.put', 'markers and config'],
    ['sites.getSite', 'markers and config'],
    ['something.else', 'other'],
  ])('%s is counted under %s', (step, group) => {
    expect(stepGroup(step)).toBe(group);
  });
});
