import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { creditMayChange, paymentsToRecredit } from '../../lambdas/domain/payments/recredit.js';
import { creditVisit, firstVisit } from '../../lambdas/domain/payments/attribution.js';
import { buildVisits, visitEventOf, type Visit } from '../../lambdas/domain/visit.js';
import { changeVisits } from '../../lambdas/services/sessionize.js';
import { ATTRIBUTION_MODELS } from '../../lambdas/domain/site.js';
import { trackedEvent } from '../support/events.js';

const MIN = 60_000;
const DAY = 86_400_000;
const T = Date.UTC(2026, 4, 20, 12);
const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);

describe('which payments a batch of visits can credit differently', () => {
  // [case, payment time, since (the batch's earliest visit start), may change]
  const rows: Array<[string, number | null, number, boolean]> = [
    ['a visit starting before the payment may take the credit', T, T - DAY, true],
    ["a visit starting at the payment's millisecond counts (start <= payment)", T, T, true],
    ['a visit starting after the payment never earned it', T, T + 1, false],
    ['a visit before the lookback window may still be the first touch', T, T - 400 * DAY, true],
    ['a payment without a time has no credit to change', null, T - DAY, false],
  ];
  it.each(rows)('%s', (_case, ts, since, expected) => {
    expect(creditMayChange(ts, since)).toBe(expected);
  });

  const p = (id: string, ts: number | null, is_renewal = false) => ({ id, ts, is_renewal });
  // [case, payments, since, ids credited again]
  const selections: Array<[string, Array<ReturnType<typeof p>>, number, string[]]> = [
    [
      "only the payments at or after the batch's earliest visit",
      [p('old', T - 2 * DAY), p('new', T + DAY)],
      T,
      ['new'],
    ],
    [
      'a renewal before the visits follows a purchase the visits may change',
      [p('buy', T), p('renew', T - DAY, true)],
      T - DAY / 2,
      ['buy', 'renew'],
    ],
    [
      'renewals stay when no payment of the visitor can change',
      [p('buy', T - 3 * DAY), p('renew', T - DAY, true)],
      T,
      [],
    ],
    ['nothing for visits after every payment (steady traffic)', [p('buy', T - DAY), p('renew', T, true)], T + MIN, []],
    [
      'a payment without a time is left, the others kept in order',
      [p('untimed', null), p('a', T), p('b', T + DAY)],
      T - DAY,
      ['a', 'b'],
    ],
  ];
  it.each(selections)('%s', (_case, payments, since, ids) => {
    expect(paymentsToRecredit(payments, since).map((x) => x.id)).toEqual(ids);
  });

  // [case, marker's latest payment, since, look the visitor up]
  const visitors: Array<[string, number | null, number, boolean]> = [
    ['no marker: the visitor never had a payment', null, T, false],
    ['a payment at or after the visits', T, T, true],
    ['every payment before the visits', T - 1, T, false],
  ];
  it.each(visitors)('%s', (_case, latest, since, expected) => {
    expect(creditMayChange(latest, since)).toBe(expected);
  });

  it('agrees with attribution: visits starting after a payment never change its credit or first touch, whatever the model and window', () => {
    const visitArb = fc.record({
      offsetMin: fc.integer({ min: -60 * 24 * 40, max: 60 * 24 * 5 }),
      direct: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(visitArb, { maxLength: 6 }),
        fc.array(visitArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...ATTRIBUTION_MODELS),
        fc.integer({ min: 1, max: 30 }),
        (stored, added, model, lookback) => {
          const toVisit = (v: { offsetMin: number; direct: boolean }, i: number, tag: string): Visit =>
            buildVisits('rule.test', 'v', [
              visitEventOf(
                trackedEvent({
                  event_id: `${tag}${i}`,
                  site: 'rule.test',
                  visitor_id: 'v',
                  ts: T + v.offsetMin * MIN,
                  channel: v.direct ? 'Direct' : 'Search',
                }),
              ),
            ])[0] as Visit;
          const before = stored.map((v, i) => toVisit(v, i, 's'));
          const after = [...before, ...added.map((v, i) => toVisit(v, i, 'a'))];
          const since = Math.min(...added.map((v) => T + v.offsetMin * MIN));
          const first = (visits: Visit[]) => {
            const f = firstVisit(visits);
            return f && f.start <= T ? f.id : null;
          };
          const same =
            creditVisit(before, T, model, lookback)?.id === creditVisit(after, T, model, lookback)?.id &&
            first(before) === first(after);
          // Where the rule says "cannot change", it must not have changed.
          if (!creditMayChange(T, since)) expect(same).toBe(true);
        },
      ),
      { seed, numRuns: 300 },
    );
  });

  it("takes `since` from the batch's resulting visits: every written or removed visit starts there or later, and a retry finds the same", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 4 }),
        (storedMin, batchMin) => {
          const event = (m: number, i: number, tag: string) =>
            trackedEvent({ event_id: `${tag}${i}`, site: 'rule.test', visitor_id: 'v', ts: T + m * MIN });
          const stored = buildVisits(
            'rule.test',
            'v',
            storedMin.map((m, i) => visitEventOf(event(m, i, 's'))),
          );
          const batch = batchMin.map((m, i) => event(m, i, 'b'));
          const change = changeVisits('rule.test', 'v', stored, batch);
          for (const v of [...change.after, ...change.before]) expect(v.start).toBeGreaterThanOrEqual(change.since);
          // The retry reads the visits the first run wrote: nothing changes, the same `since`.
          const written = [
            ...stored.filter(
              (s) => !change.before.some((b) => b.id === s.id) && !change.after.some((a) => a.id === s.id),
            ),
            ...change.after,
          ];
          const retry = changeVisits('rule.test', 'v', written, batch);
          expect(retry.after).toEqual([]);
          expect(retry.since).toBe(change.since);
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});

console.log(`recredit-rule seed: ${seed} (FOOTFALL_SEED=${seed} to replay)`);
