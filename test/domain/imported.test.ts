import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { IMPORTED_PART_BYTES, importedParts } from '../../lambdas/adapters/dynamo/imported-store.js';
import { ImportedAggregate, importedValueCounts } from '../../lambdas/domain/imported/aggregate.js';

const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', ''), fc.string({ maxLength: 2048 }));
const rows = fc.array(
  fc.record({
    day: fc.constantFrom('2025-01-30', '2025-01-31', '2025-02-01'),
    key,
    n: fc.nat({ max: 1_000_000 }),
  }),
  { maxLength: 400 },
);

describe('imported aggregates', () => {
  it('any rows: a month holds the sum of its days, every key kept, and the parts of a period hold each key once within the bound', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`imported aggregates property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(rows, (input) => {
        const aggregate = new ImportedAggregate();
        const expected = new Map<string, number>();
        for (const r of input) {
          aggregate.add(r.day, [{ metric: 'page', key: r.key, numbers: [r.n] }]);
          expected.set(
            `${r.day.slice(0, 7)}\u0000${r.key}`,
            (expected.get(`${r.day.slice(0, 7)}\u0000${r.key}`) ?? 0) + r.n,
          );
        }
        const months = aggregate.all().filter((p) => p.granularity === 'M');
        const got = new Map<string, number>();
        for (const m of months) {
          const parts = importedParts(m.entries);
          const read: Array<[string, number]> = parts.flatMap((p) => {
            expect(Buffer.byteLength(p)).toBeLessThanOrEqual(IMPORTED_PART_BYTES + 16 * 1024);
            return JSON.parse(p) as Array<[string, number]>;
          });
          expect(new Set(read.map(([k]) => k)).size).toBe(read.length);
          for (const [k, n] of importedValueCounts([
            { entries: Object.fromEntries(read.map(([k2, n2]) => [k2, [n2]])) },
          ]).flatMap((c) => Object.entries(c)))
            got.set(`${m.period}\u0000${k}`, n);
        }
        expect(got).toEqual(expected);
        expect(Object.getPrototypeOf(months[0]?.entries ?? Object.create(null))).toBeNull();
      }),
      { seed, numRuns: 100 },
    );
  });
});
