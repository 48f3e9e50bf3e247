import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { CapacityMeter, attachCapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import { PaymentListRecompute } from '../../lambdas/adapters/dynamo/payments/payment-list-recompute.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { PaymentTotalsItems } from '../../lambdas/adapters/dynamo/payments/payment-list-totals.js';
import { CohortRecompute } from '../../lambdas/adapters/dynamo/payments/cohort-recompute.js';
import { ALL_SLOTS } from '../../lambdas/adapters/dynamo/payments/dimension-slots.js';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { emptyPayment, type Payment } from '../../lambdas/domain/payments/payment.js';
import { PAYMENT_DIMENSIONS, type PaymentDimension } from '../../lambdas/domain/rollup.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * The bulk recompute (`PaymentListRecompute.bulkRecompute`, `CohortRecompute.bulk`: the import's and
 * rebuild's last steps) writes a month's days with BatchWriteItem, without a condition, carrying the
 * change counters it read before the list (`checkedBatchWrite`). These tests hold it to what the
 * guarded recompute guarantees: a webhook that changes a day and finishes its own recompute between
 * the bulk recompute's read and its write is not lost (the counter moved, so the day is recomputed
 * under the guard), parts an older recompute left under a day's group are deleted, and the stored
 * counters equal what a guarded recompute of every period writes (up to the bookkeeping `src`, `n`).
 */
const DAY = 86_400_000;
const SITE = 'race.test';
const NOW = Date.UTC(2026, 6, 20, 12);
const FIRST = Date.UTC(2026, 5, 10, 9);
const rate = () => null;

/** 30 payments of 10 customers over three June days, USD, some refunded. */
function payments(): Payment[] {
  return Array.from({ length: 30 }, (_, i) => ({
    ...emptyPayment(SITE, 'stripe', `pi_${String(i).padStart(3, '0')}`),
    ts: FIRST + (i % 3) * DAY + i * 60_000,
    amount: 1000 + 10 * i,
    currency: 'USD',
    refunded: i % 7 === 0 ? 500 : 0,
    status: 'paid',
    customer_id: `cus_${i % 10}`,
    rev: 1,
  }));
}

type Input = {
  RequestItems?: Record<string, Array<{ PutRequest?: { Item: Record<string, unknown> } }>>;
  Key?: Record<string, unknown>;
};

/** Runs `act` once, just before the first request whose input `matches` is sent (`act`'s own go through). */
function beforeFirst(conn: DynamoConnection, matches: (input: Input) => boolean, act: () => Promise<void>): () => void {
  let fired = false;
  const name = 'race';
  conn.doc.middlewareStack.add(
    (next) => async (args) => {
      if (!fired && matches(args.input as Input)) {
        fired = true;
        await act();
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => conn.doc.middlewareStack.remove(name);
}

/** A BatchWriteItem that puts an item of `type`. */
const batchOf = (type: string) => (input: Input) =>
  Object.values(input.RequestItems ?? {})
    .flat()
    .some((r) => r.PutRequest?.Item.type === type);

/** 300 payments in the first day's first hour, each credited with values of its own in every dimension: rows past one item. */
function largeDay(): Payment[] {
  return Array.from({ length: 300 }, (_, i) => ({
    ...emptyPayment(SITE, 'stripe', `pi_large_${i}`),
    ts: FIRST + i * 1000,
    amount: 1000,
    currency: 'USD',
    status: 'paid',
    customer_id: `cus_large_${i}`,
    visitor: `visitor-${i}`,
    touch: {
      session_id: `s${i}`,
      ts: FIRST - DAY,
      channel: 'Referral',
      referrer_host: null,
      source: null,
      campaign: null,
      landing_page: '/',
      country: null,
      device: 'Desktop',
    },
    touch_dims: Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, [`${d}-of-payment-${i}`]])) as Record<
      PaymentDimension,
      string[]
    >,
    rev: 1,
  }));
}

/** The recomputed counters of the site (totals, payers, dimensions, cohorts), without their bookkeeping. */
async function counters(conn: DynamoConnection): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(conn, ['src', 'n']))
    .filter((item) => /^(PT|PU|PD|CH)#/.test(String(item[PK])) && !String(item[SK]).startsWith('C#'))
    .filter((item) => String(item[SK]).split('#').length <= 3);
}

describe('the bulk recompute in batches', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: ReturnType<typeof dynamoPaymentDeps>;
  let site: SiteConfig;
  const days = ['2026-06-10', '2026-06-11', '2026-06-12'];

  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: 'UTC' }]));
    site = (await new DynamoConfigStore(conn).getSite(SITE))!;
    deps = { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => rate };
  });
  afterEach(async () => close());

  /** A payment of a new customer on the first day, through the webhook path (its own guarded recomputes). */
  const webhook = async (id: string) =>
    void (await applyProviderFacts(deps, site, {
      event_id: `evt_${id}`,
      event_type: 'payment_intent.succeeded',
      customers: [],
      subscriptions: [],
      payments: [
        {
          provider: 'stripe',
          id,
          aliases: [],
          ts: FIRST + 3_600_000,
          amount: 4200,
          currency: 'USD',
          status: 'paid',
          customer_id: `cus_${id}`,
        },
      ],
    }));

  /** Bulk-loads `list` with the loader the import uses. */
  async function load(list = payments()): Promise<void> {
    const loader = deps.bulk.bulkLoader(SITE, 'UTC', rate, { now: NOW });
    await loader.add(list);
    await loader.finish();
  }

  /**
   * Expects the stored counters to be what a guarded recompute (one payment's sync's) writes over
   * them: of every day that has totals, and its month, and the cohorts of every day that has cohort
   * items (the days some payer starts on).
   */
  async function expectAsGuarded(): Promise<void> {
    const stored = await counters(conn);
    const daysOf = (family: string) => [
      ...new Set(
        stored
          .filter((i) => String(i[PK]).startsWith(family) && String(i[SK]).startsWith('D#'))
          .map((i) => String(i[SK]).slice(2, 12)),
      ),
    ];
    await new PaymentListRecompute(conn).recompute(SITE, new Map(daysOf('PT#').map((d) => [d, new Set(ALL_SLOTS)])));
    await new CohortRecompute(conn).days(SITE, 'UTC', daysOf('CH#'), NOW);
    expect(stored).toEqual(await counters(conn));
  }

  /** The bulk load of `list`, with a webhook's sync run just before its first request `matches`. */
  async function loadRacedBy(matches: (input: Input) => boolean, list = payments()): Promise<void> {
    const off = beforeFirst(conn, matches, () => webhook('pi_race'));
    await load(list);
    off();
  }

  /** The first day's payment count, as stored. */
  const firstDayPayments = async () =>
    (await new PaymentListStore(conn).periods(SITE, 'D', days[0]!, days[0]!, true))[0]?.totals.payments;

  it('writes the days without a counter bump or a PutItem each, and what a guarded recompute would', async () => {
    const meter = new CapacityMeter();
    attachCapacityMeter(conn.doc.middlewareStack, meter);
    await load();
    const ops = meter.snapshot();
    // The month's two counters (list and cohort) are the only ones bumped (the third: the status sources),
    // its items the only ones put one by one; the guarded recompute bumps and puts each day's.
    expect(ops.UpdateItem?.calls ?? 0).toBeLessThanOrEqual(3);
    expect(ops.PutItem?.calls ?? 0).toBeLessThan(days.length * 3);
    await expectAsGuarded();
  });

  it('does not lose a webhook that recomputed a day between its read and its write (payment counters)', async () => {
    await loadRacedBy(batchOf('PAYMENT_TOTALS'));
    // Ten bulk payments on the first day, and the webhook's.
    expect(await firstDayPayments()).toBe(11);
    await expectAsGuarded();
  });

  it('does not lose a webhook that recomputed a day between its read and its write (cohorts)', async () => {
    await loadRacedBy(batchOf('COHORT'));
    const [cohort] = await new CohortRecompute(conn).cohorts.read(
      SITE,
      { granularity: 'D', from: days[0]!, to: days[0]! },
      true,
    );
    // Ten bulk payers start on the first day, and the webhook's.
    expect(cohort?.payers).toBe(11);
    await expectAsGuarded();
  });

  it('writes a day too large for one group item under the guard, from the month read, with one bump', async () => {
    const meter = new CapacityMeter();
    attachCapacityMeter(conn.doc.middlewareStack, meter);
    await load(largeDay());
    // The large day's bump, and as above the month's two and the status sources.
    expect(meter.snapshot().UpdateItem?.calls ?? 0).toBe(4);
    expect(await firstDayPayments()).toBe(300);
    await expectAsGuarded();
  });

  it('reads a too large day again when a webhook bumped its counter between the month read and its bump', async () => {
    const dayCounter = (input: Input) => input.Key?.[PK] === `PT#${SITE}` && input.Key[SK] === `C#${days[0]}`;
    await loadRacedBy(dayCounter, largeDay());
    expect(await firstDayPayments()).toBe(301);
    await expectAsGuarded();
  });

  it('deletes the parts an older recompute left under a day group it replaces', async () => {
    // A day whose group once took two items (recompute 1): its second part, under a key named by that recompute.
    const src = await new PaymentTotalsItems(conn).bump(SITE, days[0]!);
    const part = { [PK]: `PD#${SITE}#channel`, [SK]: `D#${days[0]}#0#${String(src).padStart(10, '0')}#001` };
    await conn.doc.send(new PutCommand({ TableName: conn.table, Item: { ...part, type: 'PAYMENT_DIMENSION', src } }));
    await load();
    const left = (await scanAll(conn)).filter((i) => i[PK] === part[PK] && i[SK] === part[SK]);
    expect(left).toEqual([]);
  });
});
