import { describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoIngestJournal } from '../../lambdas/adapters/dynamo/ingest-journal.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { createObjectSessionizeHandler } from '../../lambdas/handlers/sessionize-objects.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import type { LocalStreamRecord } from '../../lambdas/adapters/local-stream.js';
import { toKinesisEvent } from '../../local/kinesis-event.js';
import { objectCreated } from '../../local/consumers.js';
import { sessionizeHandlerFor } from '../support/sessionize.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const T0 = Date.UTC(2026, 4, 1, 10);
/** Five visitors, an event every 40 s: each visitor's visit spans the switch from the stream to the raw delivery. */
const EVENTS: TrackedEvent[] = Array.from({ length: 30 }, (_, i) =>
  trackedEvent({
    event_id: `u${i}`,
    visitor_id: `visitor-${i % 5}`,
    ts: T0 + i * 40_000,
    path: `/p${i % 4}`,
    channel: i % 3 ? 'Search' : 'Direct',
  }),
);
const records = (events: readonly TrackedEvent[], from: number): LocalStreamRecord[] =>
  events.map((e, i) => ({
    sequenceNumber: String(1000 + from + i),
    partitionKey: e.visitor_id,
    approximateArrivalTimestamp: T0,
    data: Buffer.from(JSON.stringify(e)),
  }));
const lines = (events: readonly TrackedEvent[]): Buffer =>
  Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

function objectHandler(conn: DynamoConnection, objects: Map<string, Buffer>) {
  return createObjectSessionizeHandler({
    journal: new DynamoIngestJournal(conn),
    objects: { get: async (key) => objects.get(key) ?? null, listSince: async () => [...objects.keys()] },
    sessionize: sessionizeHandlerFor(conn),
    archive: { put: async () => undefined },
    logger: new Logger({ logLevel: 'SILENT' }),
  });
}

async function seen(conn: DynamoConnection) {
  const site = await new DynamoConfigStore(conn).getSite('example.com');
  if (!site) throw new Error('no site');
  return reportSnapshot(conn, site, T0 + 86_400_000, { from: '2026-05-01', to: '2026-05-01' }, ['visitor-0']);
}

describe('upgrading a stack on the event stream (docs/deploy.md, "Upgrading from the event stream")', () => {
  it('sessionizes each event once when the stream drains while raw objects already arrive', async () => {
    const clean = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    await sessionizeHandlerFor(clean.conn)(toKinesisEvent(records(EVENTS, 0)));
    const expected = await seen(clean.conn);
    expect(expected.overview).toMatchObject({ current: { pageviews: EVENTS.length, visitors: 5 } });
    await clean.close();

    const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const stream = sessionizeHandlerFor(db.conn);
    // Before the deploy: the stream's first batch.
    expect((await stream(toKinesisEvent(records(EVENTS.slice(0, 10), 0)))).batchItemFailures).toEqual([]);
    // The deploy: events 10–19 were put to the stream by the old code, 20–29 to the delivery by the new. The
    // raw objects are sessionized first (a separate source), the stream's rest after, and one batch again
    // (the mapping retried it): each source's checkpoints are its own shard's.
    const objects = new Map([
      ['raw/2026/05/01/10/ingest-a', lines(EVENTS.slice(20, 25))],
      ['raw/2026/05/01/10/ingest-b', lines(EVENTS.slice(25))],
    ]);
    const raw = objectHandler(db.conn, objects);
    await raw(objectCreated('raw/2026/05/01/10/ingest-a'));
    expect((await stream(toKinesisEvent(records(EVENTS.slice(10, 20), 10)))).batchItemFailures).toEqual([]);
    await raw(objectCreated('raw/2026/05/01/10/ingest-b'));
    expect((await stream(toKinesisEvent(records(EVENTS.slice(10, 20), 10)))).batchItemFailures).toEqual([]);
    expect(await seen(db.conn)).toEqual(expected);
    await db.close();
  }, 120_000);
});
