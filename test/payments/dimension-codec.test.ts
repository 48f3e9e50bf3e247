import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DIMENSION_PART_BYTES,
  PACKED_OVERHEAD_BYTES,
  packDimension,
  unpackDimension,
} from '../../lambdas/adapters/dynamo/payments/payment-counter-codec.js';
import { UNATTRIBUTED_KEY, customerHash, type ValueCounters } from '../../lambdas/domain/payments/contribution.js';

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

/** Payer ids as the rollups store them (`customerHash`: 11 base64url characters). */
const payer = (i: number) => customerHash(`stripe:cus_${i}`);
const payers = (from: number, n: number) => Array.from({ length: n }, (_, i) => payer(from + i)).sort();
const jsonBytes = (values: Record<string, ValueCounters>) => Buffer.byteLength(JSON.stringify(values));
/** A path at the longest the tracker keeps (2,048 characters), of 3-byte characters: 6 KB of UTF-8. */
const LONGEST_PATH = `/${'路'.repeat(2047)}`;

const many = (n: number, counters: (i: number) => ValueCounters) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`/blog/post-${String(i).padStart(4, '0')}`, counters(i)]));

/** Counters as a recompute stores them (`packCounters`): payer sets while ≤ 1,000 entries in all, else counts. */
const TABLE: Array<[string, Record<string, ValueCounters>]> = [
  ['empty', {}],
  ['one value, one payer', { '/pricing': [1, 4900, [payer(1)]] }],
  [
    '≤ 1,000 payers as hashes (100 values × 10, payers shared between values)',
    many(100, (i) => [12, 12 * 1999, payers(i * 3, 10)]),
  ],
  ['> 1,000 payer entries: counts', many(2000, (i) => [i + 1, (i + 1) * 990, (i % 40) + 1])],
  [
    'a group: <dimension>#<value> keys, (none), the Unattributed row (NUL key)',
    {
      [UNATTRIBUTED_KEY]: [3, 300, payers(0, 3)],
      'channel#Search': [2, 200, payers(3, 2)],
      'campaign#(none)': [5, 500, payers(0, 5)],
    },
  ],
  [
    'unicode paths',
    { '/é/😀/日本語': [1, 100, [payer(1)]], '/"quoted"\\back\u2028': [2, 200, payers(2, 2)], '/\u0001ctl': [1, 1, 1] },
  ],
  ['the longest path with 1,000 payers (a part of its own)', { [LONGEST_PATH]: [1000, 4_900_000, payers(0, 1000)] }],
];

describe("packDimension: a PAYMENT_DIMENSION item's counters as deflated JSON (`vz`)", () => {
  it.each(TABLE)('%s: round trip, packed within JSON + PACKED_OVERHEAD_BYTES', (_name, values) => {
    const { vz } = packDimension(values);
    expect(unpackDimension({ vz })).toEqual(values);
    expect(vz.length).toBeLessThanOrEqual(jsonBytes(values) + PACKED_OVERHEAD_BYTES);
  });

  it('reads an item without `vz` as no values', () => {
    expect(unpackDimension({})).toEqual({});
  });

  it('the longest path with 1,000 payers is one value under the part bound, packed far smaller', () => {
    const values = TABLE.at(-1)?.[1] ?? {};
    expect(jsonBytes(values)).toBeLessThanOrEqual(DIMENSION_PART_BYTES);
    expect(packDimension(values).vz.length).toBeLessThan(jsonBytes(values) / 2);
  });

  it('round-trips any counters, within JSON + PACKED_OVERHEAD_BYTES, even of incompressible text (fast-check)', () => {
    const value = fc.string({
      unit: fc.oneof(
        fc.constantFrom('/', '#', '"', '\\', '\u0000'),
        fc.integer({ min: 0x20, max: 0xd7ff }).map((c) => String.fromCharCode(c)),
      ),
      maxLength: 2048,
    });
    const counters: fc.Arbitrary<ValueCounters> = fc.tuple(
      fc.nat(),
      fc.integer({ min: -1e9, max: 1e9 }),
      fc.oneof(fc.nat(), fc.uniqueArray(fc.integer({ min: 0, max: 1e6 }).map(payer), { maxLength: 40 })),
    );
    console.log(`dimension codec property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(fc.dictionary(value, counters, { maxKeys: 30 }), (values) => {
        const { vz } = packDimension(values);
        expect(unpackDimension({ vz })).toEqual(JSON.parse(JSON.stringify(values)));
        expect(vz.length).toBeLessThanOrEqual(jsonBytes(values) + PACKED_OVERHEAD_BYTES);
      }),
      { seed, numRuns: 200 },
    );
  });
});
