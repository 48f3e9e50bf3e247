import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { DynamoRealtimeStore } from '../../lambdas/adapters/dynamo/realtime-store.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import { applyProviderFacts, recreditVisitors, type PaymentDeps } from '../../lambdas/services/payments.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { reportSnapshot } from '../support/report-snapshot.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 9, 14, 9, 0);

/**
 * While a rebuild builds generation 1 (`building: 1` on the SITE item), the
 * sessionizer and the payment paths write the live generation (the domain
 * itself) and generation 1 alike (docs/rebuild.md): the same items under two
 * namespaces.
 */
describe('writes while a rebuild builds a generation', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;

  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC', building: 1 }]));
  });
  afterEach(async () => close());

  const ev = (minutes: number, visitor = 'visitor-a', overrides: Partial<TrackedEvent> = {}) =>
    trackedEvent({
      ts: T0 + minutes * MIN,
      event_id: `e${minutes}-${visitor}`,
      visitor_id: visitor,
      site: 'example.com',
      ...overrides,
    });

  /** The items of one namespace, with the namespace written as `<ns>` so two namespaces compare. */
  async function itemsOf(ns: string) {
    const mark = (v: unknown) => (typeof v === 'string' ? v.split(ns).join('<ns>') : v);
    return (await scanAll(conn, ['ver', 'rev', 'seq']))
      .filter((i) => String(i.pk).split('#')[1] === ns)
      .map((i) => Object.fromEntries(Object.entries(i).map(([k, v]) => [k, mark(v)])));
  }

  it('the sessionizer writes the same visits and rollups into both generations', async () => {
    const deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
    };
    const batch = [
      ev(0),
      ev(5, 'visitor-a', { path: '/pricing' }),
      ev(3, 'visitor-b', { channel: 'Search', source: 'Google' }),
    ];
    const outcome = await sessionizeBatch(
      deps,
      { shard: 's', sequence: '1' },
      batch.map((e) => ({ sequenceNumber: '1', data: Buffer.from(JSON.stringify(e)) })),
    );
    expect(outcome).toMatchObject({ events: 3, visitors: 2, visitsWritten: 4 });
    const live = await itemsOf('example.com');
    expect(live.map((i) => i.type).sort()).toEqual(['ROLLUP_DELTA', 'ROLLUP_LOG_STATE', 'VISIT', 'VISIT']);
    expect(await itemsOf('example.com~1')).toEqual(live);
    // Folded into rollup items, the two generations still match.
    for (const ns of ['example.com', 'example.com~1']) await deps.rollups.compact(ns);
    const compacted = await itemsOf('example.com');
    expect(compacted.filter((i) => i.type === 'ROLLUP').length).toBeGreaterThan(4);
    expect(await itemsOf('example.com~1')).toEqual(compacted);
  });

  it('writes realtime items for the live generation only: reports read realtime from it alone', async () => {
    const deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
      realtime: { store: new DynamoRealtimeStore(conn), clock: () => T0 + 10 * MIN },
    };
    const batch = [ev(0), ev(3, 'visitor-b', { channel: 'Search', source: 'Google' })];
    const outcome = await sessionizeBatch(
      deps,
      { shard: 's', sequence: '1' },
      batch.map((e) => ({ sequenceNumber: '1', data: Buffer.from(JSON.stringify(e)) })),
    );
    expect(outcome.realtimeItems).toBeGreaterThan(0);
    const realtime = (await scanAll(conn)).filter((i) => i.type === 'REALTIME').map((i) => String(i.pk));
    expect(realtime.length).toBeGreaterThan(0);
    expect(realtime.filter((pk) => !pk.includes('example.com~'))).toEqual(realtime);
    expect((await new DynamoRealtimeStore(conn).read('example.com~1', T0 - MIN)).length).toBe(0);
    expect((await new DynamoRealtimeStore(conn).read('example.com', T0 - MIN)).length).toBeGreaterThan(0);
  });

  it("a webhook's payment is stored and credited in both generations, against each one's visits", async () => {
    const visits = new DynamoVisitStore(conn);
    const payments = dynamoPaymentStores(conn);
    const deps: PaymentDeps = { ...dynamoPaymentDeps(conn, () => T0 + 60 * MIN), rates: async () => () => null };
    // Only the generation being built knows the visit yet (say the rebuild has read it from the archive).
    await sessionizeBatch(
      {
        sites: {
          getSite: async () => ({
            ...(await new DynamoConfigStore(conn).getSite('example.com'))!,
            building: undefined,
            generation: 1,
          }),
        },
        visits,
        rollups: new DynamoRollupStore(conn),
      },
      { shard: 'rebuild', sequence: '1' },
      [
        {
          sequenceNumber: '1',
          data: Buffer.from(JSON.stringify(ev(0, 'visitor-a', { channel: 'Search', source: 'Google' }))),
        },
      ],
    );
    const site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
    await applyProviderFacts(deps, site, {
      event_id: 'evt',
      event_type: 't',
      customers: [],
      subscriptions: [],
      payments: [
        {
          provider: 'stripe',
          id: 'pi_1',
          aliases: [],
          ts: T0 + 30 * MIN,
          amount: 1000,
          currency: 'USD',
          status: 'paid',
          visitor_id: 'visitor-a',
        },
      ],
    });
    expect((await payments.payments.getPayment('example.com', 'stripe', 'pi_1'))?.touch).toBeNull();
    expect((await payments.payments.getPayment('example.com~1', 'stripe', 'pi_1'))?.touch).toMatchObject({
      channel: 'Search',
    });
    // The visit reaches the live generation through the stream: re-crediting fans out to both, the live count is returned.
    await sessionizeBatch(
      { sites: new DynamoConfigStore(conn), visits, rollups: new DynamoRollupStore(conn) },
      { shard: 's', sequence: '2' },
      [
        {
          sequenceNumber: '2',
          data: Buffer.from(JSON.stringify(ev(0, 'visitor-a', { channel: 'Search', source: 'Google' }))),
        },
      ],
    );
    expect(await recreditVisitors(deps, site, [{ visitor: 'visitor-a' }])).toBe(1);
    expect((await payments.payments.getPayment('example.com', 'stripe', 'pi_1'))?.touch).toMatchObject({
      channel: 'Search',
    });
    const query = { from: '2026-10-01', to: '2026-10-31' };
    const live = await reportSnapshot(conn, site, T0 + 60 * MIN, query, ['visitor-a']);
    expect(live.overview.current).toMatchObject({ visitors: 1, payments: 1 });
    expect(await reportSnapshot(conn, { ...site, generation: 1 }, T0 + 60 * MIN, query, ['visitor-a'])).toEqual(live);
  });
});
