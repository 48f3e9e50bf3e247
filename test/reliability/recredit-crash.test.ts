import { describe, expect, it } from 'vitest';
import { dynamoPaymentListLayout } from '../../lambdas/adapters/dynamo/payments/payment-list-layout.js';
import { BatchWriteCommand, DeleteCommand, PutCommand, UpdateCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { applyProviderFacts, recreditVisitors, type PaymentDeps } from '../../lambdas/services/payments.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { batchWrite } from '../../lambdas/adapters/dynamo/batch.js';
import { trackedEvent } from '../support/events.js';
import { emptyDimension } from '../support/comparable-items.js';

/**
 * The sessionizer's re-credit settles a batch's payments first and recomputes
 * the union of their days and months once (`RecomputeBatch`). A crash at any
 * of its writes, then the retry the stream makes, must end in the tables a
 * run without a crash leaves: the `pending` marks of the list items and the
 * `unlisted` positions of the payments carry what is left to the retry.
 */
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 30, 12);
const DOMAIN = 'crash.test';
const T = Date.UTC(2026, 5, 10, 9);

class Crash extends Error {}

/** Makes the k-th write (0-based) on the connection throw, as a process dying there would; counts writes. */
function crashAt(conn: DynamoConnection, k: number): { writes: () => number; disarm: () => void } {
  const send = conn.doc.send.bind(conn.doc);
  let writes = 0;
  conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
    if (
      command instanceof PutCommand ||
      command instanceof UpdateCommand ||
      command instanceof DeleteCommand ||
      command instanceof BatchWriteCommand
    ) {
      if (writes === k) throw new Crash(`crash at write ${k}`);
      writes++;
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof conn.doc.send;
  return { writes: () => writes, disarm: () => void (conn.doc.send = send) };
}

const fact = (f: Partial<PaymentFact> & { id: string }): PaymentFact => ({
  provider: 'stripe',
  aliases: [],
  currency: 'USD',
  status: 'paid',
  ...f,
});

/** Payments imported before their visits: a purchase and its renewal, a partly refunded payment; two days of one month. */
const PAYMENTS: PaymentFact[] = [
  fact({ id: 'pi_a1', ts: T + 2 * DAY, amount: 4900, customer_id: 'cus_a', visitor_id: 'visitor-a' }),
  fact({ id: 'pi_a2', ts: T + 3 * DAY, amount: 4900, customer_id: 'cus_a', visitor_id: 'visitor-a', is_renewal: true }),
  fact({
    id: 'pi_b1',
    ts: T + 2 * DAY + 60_000,
    amount: 2000,
    refunded: 500,
    customer_id: 'cus_b',
    visitor_id: 'visitor-b',
  }),
];

/** Their visits, arriving later: a Search visit and a Direct one for a, a Social one for b. */
const VISITS = [
  buildVisits(DOMAIN, 'visitor-a', [
    visitEventOf(
      trackedEvent({
        event_id: 'a1',
        site: DOMAIN,
        visitor_id: 'visitor-a',
        ts: T,
        channel: 'Search',
        path: '/pricing',
      }),
    ),
    visitEventOf(
      trackedEvent({
        event_id: 'a2',
        site: DOMAIN,
        visitor_id: 'visitor-a',
        ts: T + DAY,
        channel: 'Direct',
        path: '/',
      }),
    ),
  ]),
  buildVisits(DOMAIN, 'visitor-b', [
    visitEventOf(
      trackedEvent({
        event_id: 'b1',
        site: DOMAIN,
        visitor_id: 'visitor-b',
        ts: T + DAY,
        channel: 'Social',
        country: 'FR',
        path: '/blog',
      }),
    ),
  ]),
].flat();

async function prepared(): Promise<{
  conn: DynamoConnection;
  close: () => Promise<void>;
  deps: PaymentDeps;
  site: SiteConfig;
}> {
  const { conn, close } = await memoryTable([{ domain: DOMAIN, timezone: 'America/New_York' }]);
  const site = (await new DynamoConfigStore(conn).getSite(DOMAIN))!;
  const deps: PaymentDeps = {
    ...dynamoPaymentStores(conn, () => NOW),
    list: dynamoPaymentListLayout,
    visits: new DynamoVisitStore(conn),
    rates: async () => () => null,
    clock: () => NOW,
  };
  for (const p of PAYMENTS)
    await applyProviderFacts(deps, site, {
      event_id: p.id,
      event_type: 't',
      payments: [p],
      subscriptions: [],
      customers: [],
    });
  await deps.visits.writeVisits(VISITS, []);
  return { conn, close, deps, site };
}

/** Every item as stored (binary attributes as they are, unlike `scanAll`). */
async function rawItems(conn: DynamoConnection): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table }))
    items.push(...(page.Items ?? []));
  return items;
}

/** Puts the table back to `items` (from `rawItems`): deletes what is not among them, writes them all. */
async function restore(conn: DynamoConnection, items: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  const keep = new Set(items.map((i) => `${String(i.pk)}|${String(i.sk)}`));
  const extra = (await rawItems(conn)).filter((i) => !keep.has(`${String(i.pk)}|${String(i.sk)}`));
  await batchWrite(conn, [
    ...extra.map((i) => ({ DeleteRequest: { Key: { pk: i.pk, sk: i.sk } } })),
    ...items.map((Item) => ({ PutRequest: { Item } })),
  ]);
}

const recredit = (deps: PaymentDeps, site: SiteConfig) =>
  recreditVisitors(deps, site, [{ visitor: 'visitor-a' }, { visitor: 'visitor-b' }]);

/**
 * The table as readers see it: without the change counters (`n`) and the
 * counter values a recompute wrote from (`src`), which count recomputes, and
 * without dimension items of no value (a recompute after a crash rewrites
 * every bucket of a day; an empty one reads as a missing one).
 */
async function readable(conn: DynamoConnection): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(conn, ['created', 'src', 'n'])).filter((i) => !emptyDimension(i));
}

describe('re-credit with one recompute per batch: a crash at any write, then the retry, ends as a clean run', () => {
  it('matches the clean run for every write point of the re-credit call', async () => {
    const clean = await prepared();
    const counter = crashAt(clean.conn, Number.POSITIVE_INFINITY);
    expect(await recredit(clean.deps, clean.site)).toBe(3);
    const writes = counter.writes();
    counter.disarm();
    const expected = await readable(clean.conn);
    await clean.close();
    // Every payment moved to its visit, nothing left pending.
    const lists = expected.filter((i) => i.type === 'PAYMENT_LIST');
    expect(lists.map((i) => String(i.sk).slice(0, 1))).toEqual(['A', 'A', 'A']);
    expect(lists.every((i) => i.pending === undefined && i.stale === undefined)).toBe(true);
    expect(expected.filter((i) => i.type === 'PAYMENT' && i.unlisted !== undefined)).toEqual([]);
    expect(writes).toBeGreaterThan(20);

    // One table, brought back to the prepared state before each crash point.
    const db = await prepared();
    const start = await rawItems(db.conn);
    for (let k = 0; k < writes; k++) {
      await restore(db.conn, start);
      const fault = crashAt(db.conn, k);
      await expect(recredit(db.deps, db.site)).rejects.toBeInstanceOf(Crash);
      fault.disarm();
      await recredit(db.deps, db.site); // the retry
      expect(await readable(db.conn), `crash at write ${k} of ${writes}`).toEqual(expected);
    }
    await db.close();
  }, 900_000);
});
