import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { DynamoRecentPaymentMarks } from '../../lambdas/adapters/dynamo/recent-payment-marks.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { ShardVisitCache } from '../../lambdas/adapters/shard-visit-cache.js';
import { sessionizeBatch, type SessionizeDeps } from '../../lambdas/services/sessionize.js';
import { applyProviderFacts, recreditVisitors } from '../../lambdas/services/payments.js';
import { parsePaymentLine } from '../../lambdas/domain/payments/import-line.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { toKinesisEvent } from '../../local/kinesis-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { compared, normalize } from '../support/comparable-items.js';
import { sessionizeHandlerFor } from '../support/sessionize.js';
import { installStaleReads } from '../support/stale-reads.js';

const T0 = Date.UTC(2026, 10, 20, 9);
const MIN = 60_000;
const SITE: Partial<SiteConfig> = { domain: 'example.com', timezone: 'UTC' };

const records = (events: readonly TrackedEvent[], firstSequence: number) =>
  events.map((e, i) => ({
    sequenceNumber: String(firstSequence + i).padStart(20, '0'),
    partitionKey: e.visitor_id,
    approximateArrivalTimestamp: e.ts,
    data: Buffer.from(JSON.stringify(e)),
  }));

describe('ShardVisitCache: what a batch reads', () => {
  let table: Awaited<ReturnType<typeof memoryTable>>;
  let now = T0;
  let deps: SessionizeDeps;
  let cache: ShardVisitCache;
  let site: SiteConfig;
  let sequence = 0;
  const batch = async (found: { first: string; last: string } | null, events: TrackedEvent[]) => {
    const view = cache.batch('shard-1', found, deps.visits, deps.sites);
    const last = String(++sequence);
    await sessionizeBatch(
      { ...deps, visits: view },
      { shard: 'shard-1', sequence: last },
      records(events, sequence * 100).map((r) => ({ sequenceNumber: last, data: r.data })),
    );
    const done = { first: last, last };
    view.commit(done);
    return { counts: view.counts, done };
  };

  beforeAll(async () => {
    table = await memoryTable([SITE]);
    const sites = new DynamoConfigStore(table.conn);
    site = (await sites.getSite('example.com'))!;
    deps = { sites, visits: new DynamoVisitStore(table.conn), rollups: new DynamoRollupStore(table.conn, 1) };
    cache = new ShardVisitCache(new DynamoRecentPaymentMarks(table.conn), { clock: () => now });
  });
  afterAll(() => table.close());

  it('reads strongly until it ran the shard, then keeps the visits it wrote, and reads the others eventually consistently once settled', async () => {
    const a1 = trackedEvent({ event_id: 'a1', visitor_id: 'visitor-a', ts: now, channel: 'Search' });
    const first = await batch(null, [a1]);
    expect(first.counts).toEqual({ kept: 0, eventual: 0, strong: 1 });
    expect(cache.size).toBe(1);

    // 5 s later: visitor-a's visit is kept; visitor-b is new to the cache and the shard's last batch is not settled.
    now += 5_000;
    const second = await batch(first.done, [
      trackedEvent({ event_id: 'a2', visitor_id: 'visitor-a', ts: now }),
      trackedEvent({ event_id: 'b1', visitor_id: 'visitor-b', ts: now }),
    ]);
    expect(second.counts).toEqual({ kept: 1, eventual: 0, strong: 1 });

    now += 60_000;
    const third = await batch(second.done, [
      trackedEvent({ event_id: 'a3', visitor_id: 'visitor-a', ts: now }),
      trackedEvent({ event_id: 'c1', visitor_id: 'visitor-c', ts: now }),
    ]);
    expect(third.counts).toEqual({ kept: 1, eventual: 1, strong: 0 });
    const [visit] = await deps.visits.visitsAround('example.com', 'visitor-a', 0, now + MIN);
    expect(visit?.events.map((e) => e.id)).toEqual(['a1', 'a2', 'a3']);

    // An event older than what is kept reaches back past it: read.
    now += 60_000;
    const fourth = await batch(third.done, [
      trackedEvent({ event_id: 'a0', visitor_id: 'visitor-a', ts: T0 - 3 * 3_600_000 }),
    ]);
    expect(fourth.counts).toEqual({ kept: 0, eventual: 1, strong: 0 });

    // Another container's batch came between: nothing kept is trusted.
    now += 60_000;
    const foreign = { first: '999', last: '999' };
    const fifth = await batch(foreign, [trackedEvent({ event_id: 'a4', visitor_id: 'visitor-a', ts: now })]);
    expect(fifth.counts).toEqual({ kept: 0, eventual: 0, strong: 1 });
    expect(cache.size).toBe(1);

    // A kept visitor's payments marker raised by a webhook meanwhile is learnt from the recent raises.
    now += 60_000;
    const payments = dynamoPaymentDeps(table.conn, () => now);
    const paidAt = new Date(now - 30_000).toISOString();
    await applyProviderFacts(
      payments,
      site,
      parsePaymentLine(
        JSON.stringify({
          provider: 'stripe',
          provider_payment_id: 'pi_1',
          ts: paidAt,
          amount: 4900,
          currency: 'USD',
          visitor_id: 'visitor-a',
        }),
        1,
      ),
    );
    const recredited: string[] = [];
    const withRecredit = {
      ...deps,
      recredit: async (_s: SiteConfig, visitors: ReadonlyArray<{ visitor: string }>) => (
        recredited.push(...visitors.map((v) => v.visitor)),
        visitors.length
      ),
    };
    const view = cache.batch('shard-1', fifth.done, deps.visits, deps.sites);
    await sessionizeBatch(
      { ...withRecredit, visits: view },
      { shard: 'shard-1', sequence: '50' },
      records([trackedEvent({ event_id: 'a5', visitor_id: 'visitor-a', ts: now })], 5000).map((r) => ({
        sequenceNumber: '50',
        data: r.data,
      })),
    );
    expect(view.counts).toEqual({ kept: 1, eventual: 0, strong: 0 });
    expect(recredited).toEqual(['visitor-a']);
    view.commit({ first: '50', last: '50' });

    // A bulk rewrite of markers: strong reads while it is recent.
    now += 60_000;
    await new DynamoRecentPaymentMarks(table.conn).recordReset('example.com', now - 1_000);
    const sixth = await batch({ first: '50', last: '50' }, [
      trackedEvent({ event_id: 'a6', visitor_id: 'visitor-a', ts: now }),
    ]);
    expect(sixth.counts).toEqual({ kept: 0, eventual: 0, strong: 1 });
  });

  it('keeps at most maxVisitors visitors, none with more than maxEventsPerVisitor events, and only visits near the newest', async () => {
    const small = new ShardVisitCache(new DynamoRecentPaymentMarks(table.conn), {
      clock: () => now,
      maxVisitors: 2,
      maxEventsPerVisitor: 3,
    });
    // Past the bulk reset the test before recorded.
    now += 40 * MIN;
    const run = async (
      events: TrackedEvent[],
      found: { first: string; last: string } | null,
      done: { first: string; last: string },
    ) => {
      const view = small.batch('shard-3', found, deps.visits, deps.sites);
      await sessionizeBatch(
        { ...deps, visits: view },
        { shard: 'shard-3', sequence: done.last },
        events.map((e) => ({ sequenceNumber: done.last, data: Buffer.from(JSON.stringify(e)) })),
      );
      view.commit(done);
      return view.counts;
    };
    const at = now;
    // Three visitors: the least recently kept goes. A visitor of four events is not kept at all.
    await run(
      ['k1', 'k2', 'k3'].map((v, i) => trackedEvent({ event_id: `${v}-0`, visitor_id: v, ts: at + i })),
      null,
      { first: '1', last: '1' },
    );
    expect(small.size).toBe(2);
    await run(
      Array.from({ length: 4 }, (_, i) => trackedEvent({ event_id: `big-${i}`, visitor_id: 'big', ts: at + i * 1000 })),
      { first: '1', last: '1' },
      { first: '2', last: '2' },
    );
    expect(small.size).toBe(2);
    now += 60_000;
    expect(
      await run(
        [
          trackedEvent({ event_id: 'k3-1', visitor_id: 'k3', ts: now }),
          trackedEvent({ event_id: 'big-4', visitor_id: 'big', ts: now }),
        ],
        { first: '2', last: '2' },
        { first: '3', last: '3' },
      ),
    ).toEqual({ kept: 1, eventual: 1, strong: 0 });
    // A visit that ended more than an hour before the visitor's newest is no longer kept: an event reaching back to it reads.
    now += 60_000;
    expect(
      await run(
        [trackedEvent({ event_id: 'k3-2', visitor_id: 'k3', ts: at + 3 * 3_600_000 })],
        { first: '3', last: '3' },
        { first: '4', last: '4' },
      ),
    ).toEqual({ kept: 1, eventual: 0, strong: 0 });
    now += 60_000;
    expect(
      await run(
        [trackedEvent({ event_id: 'k3-3', visitor_id: 'k3', ts: at + 5 * 60_000 })],
        { first: '4', last: '4' },
        { first: '5', last: '5' },
      ),
    ).toEqual({ kept: 0, eventual: 1, strong: 0 });
  });

  it('forgets the shard when a batch fails', async () => {
    now += 60_000;
    const view = cache.batch('shard-2', null, deps.visits, deps.sites);
    await view.visitsAndPayments('example.com', 'visitor-z', now - MIN, now);
    view.commit({ first: '1', last: '1' });
    const failed = cache.batch('shard-2', { first: '1', last: '1' }, deps.visits, deps.sites);
    failed.abandon();
    const after = cache.batch('shard-2', { first: '1', last: '1' }, deps.visits, deps.sites);
    await after.visitsAndPayments('example.com', 'visitor-z', now - MIN, now);
    expect(after.counts).toEqual({ kept: 0, eventual: 0, strong: 1 });
  });
});

/**
 * What breaks past the bet (docs/reliability.md, "Stale reads"): a read that answers from before a
 * write the shard's previous batch made more than `settleMs` earlier. Every eventually consistent read
 * here answers as of the oldest moment of the last 120 s.
 */
describe('ShardVisitCache: reads staler than the cache waits', () => {
  const run = async (settleMs: number) => {
    const table = await memoryTable([SITE]);
    try {
      let now = T0;
      const clock = () => now;
      const stale = installStaleReads(table.conn, { windowMs: 120_000, seed: 1, clock, oldest: true });
      const handler = sessionizeHandlerFor(table.conn, {
        visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(table.conn), { clock, maxVisitors: 0, settleMs }),
      });
      for (const [i, advance] of [0, 60_000].entries()) {
        now += advance;
        const event = trackedEvent({ event_id: `x${i}`, visitor_id: 'visitor-x', ts: now });
        expect((await handler(toKinesisEvent(records([event], 100 + i)))).batchItemFailures).toEqual([]);
      }
      const visits = await new DynamoVisitStore(table.conn).visitsAround('example.com', 'visitor-x', 0, now + MIN);
      return { visits: visits.map((v) => v.events.map((e) => e.id)), stale: stale.stale };
    } finally {
      await table.close();
    }
  };

  it('below the wait, a read that misses a webhook since the last batch (its payments marker) changes nothing', async () => {
    const end = async (stale: boolean) => {
      const table = await memoryTable([SITE]);
      try {
        let now = T0;
        const clock = () => now;
        const counts = stale ? installStaleReads(table.conn, { windowMs: 20_000, seed: 1, clock, oldest: true }) : null;
        const payments = dynamoPaymentDeps(table.conn, clock);
        const handler = sessionizeHandlerFor(table.conn, {
          recredit: (s, visitors) => recreditVisitors(payments, s, visitors),
          ...(stale
            ? { visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(table.conn), { clock, maxVisitors: 0 }) }
            : {}),
        });
        const site = (await new DynamoConfigStore(table.conn).getSite('example.com'))!;
        const batch = async (i: number, ts: number, channel: string) => {
          const event = trackedEvent({ event_id: `x${i}`, visitor_id: 'visitor-x', ts, channel });
          expect((await handler(toKinesisEvent(records([event], 100 + i)))).batchItemFailures).toEqual([]);
        };
        await batch(0, now, 'Direct');
        now += 40 * MIN;
        const line = { provider: 'stripe', provider_payment_id: 'pi_1', amount: 4900, currency: 'USD' };
        await applyProviderFacts(
          payments,
          site,
          parsePaymentLine(JSON.stringify({ ...line, ts: new Date(now).toISOString(), visitor_id: 'visitor-x' }), 1),
        );
        now += 2_000;
        // A visit from before the payment, late: the payment's credit moves to it (a re-credit).
        await batch(1, now - 5 * MIN, 'Search');
        return {
          items: (await scanAll(table.conn, ['created'])).filter(compared).map(normalize),
          stale: counts?.stale,
        };
      } finally {
        await table.close();
      }
    };
    const cached = await end(true);
    expect(cached.stale).toBeGreaterThan(0);
    expect(cached.items).toEqual((await end(false)).items);
  });

  it('splits a visit when the read misses the previous batch (30 s wait), and not when the cache waits as long as reads may lag', async () => {
    const past = await run(30_000);
    expect(past.stale).toBeGreaterThan(0);
    expect(past.visits).toEqual([['x0'], ['x1']]);
    expect((await run(120_000)).visits).toEqual([['x0', 'x1']]);
  });
});
