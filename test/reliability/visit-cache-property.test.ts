import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRecentPaymentMarks } from '../../lambdas/adapters/dynamo/recent-payment-marks.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { ShardVisitCache } from '../../lambdas/adapters/shard-visit-cache.js';
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

// The sessionizer's visit cache as a property (45 generated runs with crashes and stale reads): minutes on two
// cores, so it runs with the reliability checks; the directed tests of the cache stay in
// test/services/sessionize-visit-cache.test.ts.
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

/**
 * The cache changes what is read, never what is written: the same stream of
 * batches and webhooks through the handler with two containers' caches
 * (each invocation on either, a crash at any write, then a retry on
 * either) and through the handler without a cache leave identical tables.
 */
describe('ShardVisitCache: the same end state as strong reads (property)', () => {
  const step = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('batch' as const),
        advance: fc.constantFrom(2_000, 15_000, 60_000, 20 * MIN, 45 * MIN),
        events: fc.array(
          fc.record({
            visitor: fc.integer({ min: 0, max: 2 }),
            lag: fc.constantFrom(0, 0, 0, 30_000, 10 * MIN, 50 * MIN),
            channel: fc.constantFrom('Direct', 'Search', 'AI'),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        container: fc.integer({ min: 0, max: 1 }),
        crashAt: fc.option(fc.integer({ min: 0, max: 12 }), { freq: 3 }),
        retryOn: fc.integer({ min: 0, max: 1 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('payment' as const),
        // Time passes before the webhook too: a batch 30 s or more after the last one may then read its writes eventually.
        advance: fc.constantFrom(0, 0, 10_000, 40_000, 5 * MIN),
        visitor: fc.integer({ min: 0, max: 2 }),
        before: fc.constantFrom(0, 5 * MIN, 2 * 3_600_000),
      }),
    },
  );

  /**
   * Runs the steps on a strongly reading sessionizer and on two containers with visit caches, and
   * compares the tables. With `stale`, the cached side's eventually consistent reads answer as of
   * any moment of the last `stale.ms` (`installStaleReads`), its caches keep `maxVisitors` and wait
   * `settleMs` (default 30 s) before reading eventually; resolves with how many of its reads were
   * stale. `FOOTFALL_STALE_LOG=1` prints each stale answer (which keys it hid changes of, how old).
   */
  const sameEndState = async (
    name: string,
    numRuns: number,
    stale?: { ms: number; maxVisitors: number; settleMs?: number },
  ): Promise<{ reads: number; stale: number }> => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`${name}: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const counts = { reads: 0, stale: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 14 }), async (steps) => {
        const ref = await memoryTable([SITE]);
        const sut = await memoryTable([SITE]);
        try {
          let now = T0;
          const clock = () => now;
          const onStale = process.env.FOOTFALL_STALE_LOG
            ? (read: { keys: string[]; ageMs: number }) =>
                console.log(`stale read at +${(now - T0) / 1000} s, ${read.ageMs} ms back: ${read.keys.join(' ')}`)
            : undefined;
          const staleReads = stale
            ? installStaleReads(sut.conn, { windowMs: stale.ms, seed, clock, ...(onStale ? { onStale } : {}) })
            : null;
          const handlerOf = (conn: DynamoConnection, visitCache?: ShardVisitCache) => {
            const payments = dynamoPaymentDeps(conn, clock);
            return sessionizeHandlerFor(conn, {
              recredit: (s, visitors) => recreditVisitors(payments, s, visitors),
              visitCache,
            });
          };
          const plain = handlerOf(ref.conn);
          const containers = [0, 1].map(() =>
            handlerOf(
              sut.conn,
              new ShardVisitCache(new DynamoRecentPaymentMarks(sut.conn), {
                clock,
                ...(stale ? { maxVisitors: stale.maxVisitors } : {}),
                ...(stale?.settleMs ? { settleMs: stale.settleMs } : {}),
              }),
            ),
          );
          const site = (await new DynamoConfigStore(ref.conn).getSite('example.com'))!;
          let sequence = 1000;
          let eventId = 0;
          let paymentId = 0;
          for (const s of steps) {
            if (s.kind === 'payment') {
              now += s.advance;
              const line = JSON.stringify({
                provider: 'stripe',
                provider_payment_id: `pi_${++paymentId}`,
                ts: new Date(now - s.before).toISOString(),
                amount: 4900,
                currency: 'USD',
                visitor_id: `visitor-${s.visitor}`,
              });
              for (const conn of [ref.conn, sut.conn])
                await applyProviderFacts(dynamoPaymentDeps(conn, clock), site, parsePaymentLine(line, 1));
              continue;
            }
            now += s.advance;
            const events = s.events.map((e) =>
              trackedEvent({
                event_id: `e${++eventId}`,
                visitor_id: `visitor-${e.visitor}`,
                ts: now - e.lag,
                channel: e.channel,
                path: `/p${eventId % 4}`,
              }),
            );
            const kinesis = toKinesisEvent(records(events, sequence));
            sequence += events.length;
            expect((await plain(kinesis)).batchItemFailures).toEqual([]);
            const send = sut.conn.doc.send.bind(sut.conn.doc);
            if (s.crashAt !== null) {
              let writes = 0;
              sut.conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
                if (
                  (command instanceof PutCommand ||
                    command instanceof BatchWriteCommand ||
                    command instanceof UpdateCommand) &&
                  writes++ === s.crashAt
                )
                  throw new Error('crash');
                return (send as (...a: unknown[]) => unknown)(command, ...rest);
              }) as typeof sut.conn.doc.send;
            }
            const first = await (containers[s.container] as typeof plain)(kinesis);
            sut.conn.doc.send = send;
            if (first.batchItemFailures.length > 0)
              expect((await (containers[s.retryOn] as typeof plain)(kinesis)).batchItemFailures).toEqual([]);
          }
          // A crash in a re-credit leaves recompute counters (`src`, `n`) further on after its retry: bookkeeping, compared out.
          const items = async (conn: DynamoConnection) =>
            (await scanAll(conn, ['created'])).filter(compared).map(normalize);
          counts.reads += staleReads?.reads ?? 0;
          counts.stale += staleReads?.stale ?? 0;
          expect(await items(sut.conn)).toEqual(await items(ref.conn));
        } finally {
          await ref.close();
          await sut.close();
        }
      }),
      { seed, numRuns, endOnFailure: true },
    );
    if (stale) console.log(`${name}: ${counts.reads} eventually consistent reads, ${counts.stale} answered stale`);
    return counts;
  };

  it('leaves the table a strongly reading sessionizer leaves, whatever the containers, crashes and webhooks', async () => {
    await sameEndState('visit-cache property', 25);
  }, 300_000);

  // No visitor kept (maxVisitors 0): every read of a settled shard is eventually consistent, so stale answers
  // reach the sessionizer (docs/reliability.md, "Stale reads"). Below the cache's 30 s wait, what a read may miss
  // is a webhook's writes since the last batch (the payments marker on the visitor's partition).
  it('does so when eventually consistent reads are up to 20 s stale (under the 30 s the cache waits)', async () => {
    const counts = await sameEndState('visit-cache property, 20 s stale reads', 10, { ms: 20_000, maxVisitors: 0 });
    expect(counts.reads).toBeGreaterThan(0);
  }, 600_000);

  // AWS states no bound: at 120 s the property holds once the cache waits as long before reading eventually.
  // With the default 30 s wait it fails, by construction (the directed test below shows how).
  it('does so when eventually consistent reads are up to 120 s stale and the cache waits 120 s', async () => {
    const counts = await sameEndState('visit-cache property, 120 s stale reads, 120 s wait', 10, {
      ms: 120_000,
      maxVisitors: 0,
      settleMs: 120_000,
    });
    expect(counts.reads).toBeGreaterThan(0);
  }, 600_000);
});
