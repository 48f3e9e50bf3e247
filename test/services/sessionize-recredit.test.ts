import { afterEach, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore, PAYMENTS_MARK_SK, visitorPk } from '../../lambdas/adapters/dynamo/visit-store.js';
import { applyProviderFacts, recreditVisitors, type PaymentDeps } from '../../lambdas/services/payments.js';
import { sessionizeBatch, type SessionizeDeps, type VisitorRecredit } from '../../lambdas/services/sessionize.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * The sessionizer reads each visitor's payments marker with the visits
 * (one Query) and credits again only the payments its visits can change
 * (the read and write budgets, `docs/benchmarks.md` "Budgets"), yet a retried batch still
 * finishes a re-credit a crash interrupted.
 */
const MIN = 60_000;
const DOMAIN = 'marks.test';
const T = Date.UTC(2026, 4, 12, 9);
const NOW = T + 30 * 86_400_000;

let db: { conn: DynamoConnection; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

async function setUp() {
  db = await memoryTable([{ domain: DOMAIN, timezone: 'UTC' }]);
  const { conn } = db;
  const config = new DynamoConfigStore(conn);
  const site = (await config.getSite(DOMAIN)) as SiteConfig;
  const visits = new DynamoVisitStore(conn);
  const payments: PaymentDeps = { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => () => null };
  const calls: VisitorRecredit[][] = [];
  let crash = false;
  const deps: SessionizeDeps = {
    sites: config,
    visits,
    rollups: new DynamoRollupStore(conn),
    recredit: async (s, entries) => {
      calls.push([...entries]);
      if (crash) {
        crash = false;
        throw new Error('crash before the re-credit');
      }
      return recreditVisitors(payments, s, entries);
    },
  };
  let seq = 0;
  const run = (events: TrackedEvent[], sequence = String(++seq * 100)) =>
    sessionizeBatch(
      deps,
      { shard: 'shard-1', sequence },
      events.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) })),
    );
  const pay = (id: string, ts: number, visitor: string) =>
    applyProviderFacts(payments, site, {
      event_id: id,
      event_type: 't',
      subscriptions: [],
      customers: [],
      payments: [
        { provider: 'stripe', id, aliases: [], ts, amount: 1000, currency: 'USD', status: 'paid', visitor_id: visitor },
      ],
    });
  return { conn, site, visits, payments, calls, run, pay, crashNext: () => void (crash = true) };
}

const ev = (id: string, minutes: number, visitor: string, channel = 'Search') =>
  trackedEvent({ event_id: id, site: DOMAIN, visitor_id: visitor, ts: T + minutes * MIN, channel });

describe('sessionizer re-credit with payments markers', () => {
  it('looks up only visitors with a payment at or after their visits, and credits it', async () => {
    const t = await setUp();
    await t.pay('pi_1', T + 60 * MIN, 'payer');
    const marker = await t.conn.doc.send(
      new GetCommand({ TableName: t.conn.table, Key: { pk: visitorPk(DOMAIN, 'payer'), sk: PAYMENTS_MARK_SK } }),
    );
    expect(marker.Item).toMatchObject({ type: 'VISITOR_PAYMENTS', latest: T + 60 * MIN });

    // The payer's visit (before the payment) and a visitor who never paid.
    const first = await t.run([ev('p1', 0, 'payer'), ev('b1', 5, 'browser')]);
    expect(t.calls).toEqual([[{ visitor: 'payer', since: T, namespace: DOMAIN }]]);
    expect(first.recredited).toBe(1);
    expect((await t.payments.payments.getPayment(DOMAIN, 'stripe', 'pi_1'))?.touch).toMatchObject({
      channel: 'Search',
      ts: T,
    });

    // Steady traffic: the payer comes back after paying; nobody is looked up, no call at all.
    await t.run([ev('p2', 24 * 60, 'payer'), ev('b2', 24 * 60, 'browser')]);
    expect(t.calls).toHaveLength(1);
  });

  it('finishes on the retry a re-credit a crash interrupted, though the retry changes no visit', async () => {
    const t = await setUp();
    await t.pay('pi_1', T + 60 * MIN, 'payer');
    t.crashNext();
    const batch = [ev('p1', 0, 'payer', 'Social')];
    await expect(t.run(batch, '700')).rejects.toThrow('crash before the re-credit');
    expect((await t.payments.payments.getPayment(DOMAIN, 'stripe', 'pi_1'))?.touch).toBeNull();
    const retry = await t.run(batch, '700');
    expect(retry.visitsWritten).toBe(0);
    expect(t.calls[1]).toEqual([{ visitor: 'payer', since: T, namespace: DOMAIN }]);
    expect((await t.payments.payments.getPayment(DOMAIN, 'stripe', 'pi_1'))?.touch).toMatchObject({
      channel: 'Social',
    });
  });
});

describe('DynamoVisitStore.visitsAndPayments', () => {
  it('reads the marker with the visits in one Query, and an import of old events skips the later visits in one more', async () => {
    const t = await setUp();
    const events = [0, 10, 24 * 60, 48 * 60, 72 * 60, 96 * 60, 120 * 60].map((m, i) =>
      visitEventOf(ev(`v${i}`, m, 'payer')),
    );
    await t.visits.writeVisits(buildVisits(DOMAIN, 'payer', events), []);
    await t.pay('pi_1', T + 130 * 60 * MIN, 'payer');
    const store = new DynamoVisitStore(t.conn);

    // Live: the events are the newest; one request.
    const live = await store.visitsAndPayments(DOMAIN, 'payer', T + 119 * 60 * MIN, T + 121 * 60 * MIN);
    expect(store.calls.query).toBe(1);
    expect(live).toEqual({
      visits: await t.visits.visitsAround(DOMAIN, 'payer', T + 119 * 60 * MIN, T + 121 * 60 * MIN),
      latestPayment: T + 130 * 60 * MIN,
      later: false,
    });

    // Old events: the first page holds only later visits, so the next Query starts at `toMs`.
    const before = store.calls.query;
    const old = await store.visitsAndPayments(DOMAIN, 'payer', T - 30 * MIN, T + 40 * MIN);
    expect(store.calls.query - before).toBe(2);
    expect(old.visits.map((v) => v.start)).toEqual([T]);
    expect(old.latestPayment).toBe(T + 130 * 60 * MIN);
    // It says later visits were passed over (what `ShardVisitCache` needs to know before keeping the read).
    expect(old.later).toBe(true);

    // A visitor without payments has no marker.
    expect((await store.visitsAndPayments(DOMAIN, 'nobody', 0, NOW)).latestPayment).toBeNull();
  });
});
