import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { RecomputeBatch } from '../../lambdas/adapters/dynamo/payments/payment-list-batch.js';
import { dimensionPk } from '../../lambdas/adapters/dynamo/payments/payment-list-dimension-items.js';
import { listKeys, positionId } from '../../lambdas/adapters/dynamo/payments/payment-list-positions.js';
import { PaymentListRecompute } from '../../lambdas/adapters/dynamo/payments/payment-list-recompute.js';
import {
  GROUPED_DIMENSIONS,
  UNATTRIBUTED_KEY,
  valueTotals,
  type Contribution,
} from '../../lambdas/domain/payments/contribution.js';
import { NONE, PAYMENT_DIMENSIONS, bucketOf, type PaymentDimension } from '../../lambdas/domain/rollup.js';
import { ALL_SLOTS } from '../../lambdas/adapters/dynamo/payments/dimension-slots.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { propertyRuns } from '../support/suite.js';

/**
 * The group layout of the payment dimension rollups (`docs/data-model.md`,
 * "The group"): the one-bucket dimensions, the bucketed ones' `(none)` rows
 * and the Unattributed row in one item per period, the bucketed dimensions'
 * other values in their buckets, and
 * a day recomputed only for the slots its own payments touched. Breakdowns
 * read from these items must equal a direct computation from the list.
 */
const SITE = 'group.test';
const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);
const DAYS = ['2026-05-30', '2026-05-31', '2026-06-01'];
/** Credited values, `NONE` (a visit without the dimension's value: counted in the group for bucketed dimensions) among them. */
const VALUES = ['Direct', 'Search', '/', '/pricing', '/blog/a', 'FR', 'en-US', NONE, 'Signup', 'x'.repeat(40)];

/** A contribution: `attributed` takes one to three values per dimension from `VALUES`. */
const contributionArb = (i: number) =>
  fc
    .record({
      day: fc.constantFrom(...DAYS),
      attributed: fc.boolean(),
      failed: fc.boolean(),
      customer: fc.integer({ min: 0, max: 6 }),
      cents: fc.integer({ min: 100, max: 9900 }),
      values: fc.array(fc.uniqueArray(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }), {
        minLength: PAYMENT_DIMENSIONS.length,
        maxLength: PAYMENT_DIMENSIONS.length,
      }),
    })
    .map(({ day, attributed, failed, customer, cents, values }) =>
      build(i, day, attributed ? values : null, failed, customer, cents, 1),
    );

function build(
  i: number,
  day: string,
  values: string[][] | null,
  failed: boolean,
  customer: number,
  cents: number,
  rev: number,
): Contribution {
  const ts = Date.parse(`${day}T10:00:00Z`) + i * 1000;
  const dims = values
    ? (Object.fromEntries(PAYMENT_DIMENSIONS.map((d, k) => [d, values[k] ?? []])) as Record<PaymentDimension, string[]>)
    : null;
  return {
    key: `stripe:pi_${i}`,
    rev,
    ts,
    day,
    hour: `${day}T10`,
    cents,
    customer: `c${customer}`,
    touch_day: dims ? day : null,
    failed,
    refunded: false,
    dims,
  };
}

/** Payments, cents and payers per value of a dimension over the given days, Unattributed under its key, computed directly. */
function expected(
  contributions: readonly Contribution[],
  d: PaymentDimension,
  days: readonly string[],
): Record<string, [number, number, number]> {
  const out: Record<string, [number, number, Set<string>]> = {};
  for (const c of contributions) {
    if (c.failed || !days.includes(c.day)) continue;
    for (const v of c.dims ? c.dims[d] : [UNATTRIBUTED_KEY]) {
      const row = (out[v] ??= [0, 0, new Set()]);
      row[0]++;
      row[1] += c.cents;
      row[2].add(c.customer);
    }
  }
  return Object.fromEntries(Object.entries(out).map(([v, [n, cents, payers]]) => [v, [n, cents, payers.size]]));
}

async function read(
  list: PaymentListStore,
  site: string,
  d: PaymentDimension,
  g: 'D' | 'M',
  from: string,
  to: string,
): Promise<Record<string, [number, number, number]>> {
  const items = await list.dimension(site, d, g, from, to, true);
  return Object.fromEntries(
    [...valueTotals(items.map((i) => i.values))]
      .filter(([, t]) => t.payments > 0)
      .map(([v, t]) => [v, [t.payments, t.cents, t.payers]]),
  );
}

/** Every dimension's breakdown over each day, the two days of May, and the months, against the direct computation. */
async function expectBreakdowns(
  list: PaymentListStore,
  site: string,
  contributions: readonly Contribution[],
): Promise<void> {
  for (const d of PAYMENT_DIMENSIONS) {
    for (const day of DAYS)
      expect(await read(list, site, d, 'D', day, day), `${d} ${day}`).toEqual(expected(contributions, d, [day]));
    expect(await read(list, site, d, 'D', DAYS[0] ?? '', DAYS[1] ?? ''), `${d} May days`).toEqual(
      expected(contributions, d, DAYS.slice(0, 2)),
    );
    expect(await read(list, site, d, 'M', '2026-05', '2026-05'), `${d} May`).toEqual(
      expected(contributions, d, DAYS.slice(0, 2)),
    );
    expect(await read(list, site, d, 'M', '2026-06', '2026-06'), `${d} June`).toEqual(
      expected(contributions, d, DAYS.slice(2)),
    );
  }
}

describe('PAYMENT_DIMENSION groups: one item per period for the one-bucket dimensions and Unattributed', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: 'UTC' }]));
  });
  afterAll(async () => close());

  it('reads every breakdown as a direct computation after any payments move from Unattributed to a credit in one batch', async () => {
    console.log(`payment dimension groups property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(...Array.from({ length: 8 }, (_, i) => contributionArb(i))),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        async (initial, moves) => {
          // A namespace of its own per run (the store takes any site namespace).
          const site = `run${run++}.${SITE}`;
          const list = new PaymentListStore(conn);
          await list.bulkLoad(site, initial);
          await expectBreakdowns(list, site, initial);
          // The re-credit's batch: each moved payment gets its visit's values (rev 2), leaving its Unattributed position.
          const batch = new RecomputeBatch();
          const after = initial.map((c, i) =>
            moves[i] && !c.dims
              ? build(
                  i,
                  c.day,
                  PAYMENT_DIMENSIONS.map((_, k) => [VALUES[(i + k) % VALUES.length] ?? '/']),
                  c.failed,
                  Number(c.customer.slice(1)),
                  c.cents,
                  2,
                )
              : c,
          );
          for (const [i, c] of after.entries()) {
            if (c === initial[i]) continue;
            const left = listKeys(site, initial[i] as Contribution).map(positionId);
            await list.sync(site, c, left, async () => c.rev, batch);
          }
          await list.finish(batch);
          await expectBreakdowns(list, site, after);
        },
      ),
      { seed, numRuns: propertyRuns(1, 4) },
    );
  }, 300_000);

  it('holds a small day inline, writes every bucket when it outgrows the group, and never reads the stale buckets of an inline period', async () => {
    const site = `grow.${SITE}`;
    const day = DAYS[0] ?? '';
    const list = new PaymentListStore(conn);
    const long = (i: number) => `/landing/${String(i).padStart(6, '0')}/${'y'.repeat(80)}`;
    const big = (i: number, page: string) => ({
      ...build(
        i,
        day,
        PAYMENT_DIMENSIONS.map(() => ['Search']),
        false,
        i % 7,
        1000 + i,
        1,
      ),
      dims: {
        ...Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, ['Search']])),
        landing_page: [page],
        page: [page],
      } as Record<PaymentDimension, string[]>,
    });
    const check = async (all: readonly Contribution[]) => {
      for (const d of ['landing_page', 'page', 'channel', 'referrer'] as const) {
        expect(await read(list, site, d, 'D', day, day), `${d} ${day}`).toEqual(expected(all, d, [day]));
        expect(await read(list, site, d, 'M', '2026-05', '2026-05'), `${d} May`).toEqual(
          expected(all, d, DAYS.slice(0, 2)),
        );
      }
    };
    const groupItem = async () =>
      (await scanAll(conn)).find((i) => i.pk === dimensionPk(site, 'channel') && i.sk === `D#${day}#0`);
    // 400 payments on distinct landing pages in every bucket: too many values for one item, so buckets.
    const first = Array.from({ length: 400 }, (_, i) => big(i, long(i)));
    await list.bulkLoad(site, first);
    expect((await groupItem())?.i).toBeUndefined();
    await check(first);
    // All but five leave: the day fits its group again, inline; its buckets still hold the 400 (stale, unread).
    for (const c of first.slice(5))
      for (const k of listKeys(site, c))
        await conn.doc.send(new DeleteCommand({ TableName: conn.table, Key: { pk: k.pk, sk: k.sk } }));
    const recompute = new PaymentListRecompute(conn);
    await recompute.recomputeDay(site, day, new Set(ALL_SLOTS));
    await recompute.recomputeMonth(site, '2026-05', new Set(ALL_SLOTS));
    expect((await groupItem())?.i).toBe(1);
    await check(first.slice(0, 5));
    // 400 new payments whose pages all fall in bucket 0: their sync touches bucket 0 alone, yet the day
    // outgrows its group, so every bucket is written again (the stale ones of the first 400 would count).
    const bucket0 = Array.from({ length: 4000 }, (_, i) => long(10_000 + i))
      .filter((v) => bucketOf('landing_page', v) === 0 && bucketOf('page', v) === 0)
      .slice(0, 400);
    const added = bucket0.map((page, i) => big(1000 + i, page));
    const batch = new RecomputeBatch();
    for (const c of added) await list.sync(site, c, [], async () => c.rev, batch);
    await list.finish(batch);
    expect((await groupItem())?.i).toBeUndefined();
    await check([...first.slice(0, 5), ...added]);
  }, 300_000);

  it('groups the one-bucket dimensions', () => {
    expect(GROUPED_DIMENSIONS).toEqual(['channel', 'country', 'device', 'browser', 'os', 'language']);
  });
});
