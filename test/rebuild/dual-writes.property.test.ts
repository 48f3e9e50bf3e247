import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { reportSnapshot } from '../support/report-snapshot.js';
import { propertyRuns } from '../support/suite.js';

const MIN = 60_000;
const T = Date.UTC(2026, 9, 14, 9);
const NOW = Date.UTC(2026, 10, 5, 12);
const VISITORS = ['visitor-0001', 'visitor-0002', 'visitor-0003'];
const CHANNELS = [
  { channel: 'Direct', source: null, referrer_host: null },
  { channel: 'Search', source: 'Google', referrer_host: 'www.google.com' },
  { channel: 'AI', source: 'ChatGPT', referrer_host: 'chatgpt.com' },
] as const;

/** Where an event reaches the generation being built: the rebuild's archive read, the stream's dual write after the fence, or both. */
type Route = 'archive' | 'stream' | 'both';

const eventsArb = fc
  .array(
    fc.record({
      visitor: fc.integer({ min: 0, max: VISITORS.length - 1 }),
      // Minutes over two days: gaps above and below 30 minutes, so visits split, merge and cross midnight.
      minute: fc.integer({ min: 0, max: 2 * 1440 }),
      channel: fc.integer({ min: 0, max: CHANNELS.length - 1 }),
      path: fc.constantFrom('/', '/pricing', '/blog'),
      route: fc.constantFrom<Route>('archive', 'stream', 'both'),
    }),
    { minLength: 1, maxLength: 25 },
  )
  .map((list) =>
    list.map((e, i) => ({
      route: e.route,
      event: trackedEvent({
        event_id: `e${String(i).padStart(3, '0')}`,
        site: 'example.com',
        visitor_id: VISITORS[e.visitor],
        ts: T + e.minute * MIN,
        path: e.path,
        ...CHANNELS[e.channel],
      }),
    })),
  );

const records = (events: readonly TrackedEvent[], sequence: string) =>
  events.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) }));

/**
 * The claim the rebuild's fence rests on (`docs/rebuild.md`): an event that
 * reaches the generation being built through the archive read, through the
 * stream's dual write, or through both, in any interleaving of the rebuild's
 * batches (time order) with the stream's (any order), leaves that generation
 * exactly as one clean sessionizing of all the events would — visits dedupe
 * by event id, so a duplicate changes nothing.
 */
describe('a generation built from the archive while the stream writes it too', () => {
  it('ends as a clean build of every event, whatever reaches it twice and in whatever interleaving', async () => {
    const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);
    console.log(`dual-writes property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(eventsArb, fc.infiniteStream(fc.integer({ min: 0, max: 1_000_000 })), async (routed, noise) => {
        const draw = () => noise.next().value as number;
        const { conn, close } = await memoryTable([
          { domain: 'example.com', timezone: 'Europe/Berlin', generation: 0, building: 1 },
        ]);
        try {
          const live = (await new DynamoConfigStore(conn).getSite('example.com')) as SiteConfig;
          const store = { visits: new DynamoVisitStore(conn), rollups: new DynamoRollupStore(conn) };
          const into = (site: SiteConfig) => ({ ...store, sites: { getSite: async () => site } });
          const built = { ...live, building: undefined, generation: 1 };

          const chunk = <T>(items: readonly T[]) => {
            const out: T[][] = [];
            for (let i = 0; i < items.length;) {
              const n = 1 + (draw() % 4);
              out.push(items.slice(i, i + n));
              i += n;
            }
            return out;
          };
          const archived = routed
            .filter((r) => r.route !== 'stream')
            .map((r) => r.event)
            .sort((a, b) => a.ts - b.ts || (a.event_id < b.event_id ? -1 : 1));
          const streamed = routed
            .filter((r) => r.route !== 'archive')
            .map((r) => r.event)
            .sort(() => (draw() % 2 === 0 ? -1 : 1));
          const rebuildBatches = chunk(archived);
          const streamBatches = chunk(streamed);
          let rebuildSeq = 0;
          let streamSeq = 0;
          while (rebuildBatches.length || streamBatches.length) {
            if (streamBatches.length === 0 || (rebuildBatches.length > 0 && draw() % 2 === 0)) {
              const seq = String(++rebuildSeq);
              await sessionizeBatch(
                into(built),
                { shard: 'rebuild-1', sequence: seq },
                records(rebuildBatches.shift()!, seq),
              );
            } else {
              const seq = String(++streamSeq * 10);
              // The stream's sessionizer: the live site with `building`, so it writes generations 0 and 1.
              await sessionizeBatch(
                into(live),
                { shard: 'shardId-0', sequence: seq },
                records(streamBatches.shift()!, seq),
              );
            }
          }
          // The reference: every event once, in one batch, into generation 2.
          const reference = { ...built, generation: 2 };
          await sessionizeBatch(
            into(reference),
            { shard: 'clean', sequence: '1' },
            records(
              routed.map((r) => r.event),
              '1',
            ),
          );

          const query = { from: '2026-10-01', to: '2026-10-31' };
          expect(await reportSnapshot(conn, built, NOW, query, VISITORS)).toEqual(
            await reportSnapshot(conn, reference, NOW, query, VISITORS),
          );
          expect(await store.visits.visitsAround('example.com~1', 'visitor-0001', 0, NOW)).toEqual(
            (await store.visits.visitsAround('example.com~2', 'visitor-0001', 0, NOW)).map((v) => ({
              ...v,
              site: 'example.com~1',
            })),
          );
        } finally {
          await close();
        }
      }),
      { seed, numRuns: propertyRuns(3, 8), endOnFailure: true },
    );
  }, 120_000);
});
