import { describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoIngestJournal } from '../../lambdas/adapters/dynamo/ingest-journal.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import {
  DELIVERY_SHARD,
  createObjectSessionizeHandler,
  objectRecords,
} from '../../lambdas/handlers/sessionize-objects.js';
import type { ArchiveDelivery, RawObjects } from '../../lambdas/ports.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { objectCreated } from '../../local/consumers.js';
import { sessionizeHandlerFor } from '../support/sessionize.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { reportSnapshot } from '../support/report-snapshot.js';

const T0 = Date.UTC(2026, 4, 1, 10);
const EVENTS: TrackedEvent[] = Array.from({ length: 12 }, (_, i) =>
  trackedEvent({
    event_id: `e${i}`,
    visitor_id: `visitor-${i % 4}`,
    ts: T0 + i * 45_000,
    path: `/p${i % 3}`,
    channel: i % 2 ? 'Search' : 'Direct',
  }),
);
const lines = (events: readonly TrackedEvent[]): Buffer =>
  Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

/** Raw objects in memory: what Firehose delivered, by key. */
function memoryObjects(objects: Map<string, Buffer>): RawObjects {
  return { get: async (key) => objects.get(key) ?? null, listSince: async () => [...objects.keys()] };
}

const silent = new Logger({ logLevel: 'SILENT' });

/** An archive delivery that records the event ids forwarded to it, in order. */
function recordingArchive(): ArchiveDelivery & { ids: string[] } {
  const ids: string[] = [];
  return { ids, put: async (lines) => void ids.push(...lines.map((l) => String(JSON.parse(l.toString()).event_id))) };
}

function objectHandler(conn: DynamoConnection, objects: Map<string, Buffer>, archive = recordingArchive()) {
  return createObjectSessionizeHandler({
    journal: new DynamoIngestJournal(conn),
    objects: memoryObjects(objects),
    sessionize: sessionizeHandlerFor(conn),
    archive,
    logger: silent,
  });
}

/** What readers see, and the visits themselves, after compaction-free reads (reports fold the delta log). */
async function seen(conn: DynamoConnection) {
  const site = await new DynamoConfigStore(conn).getSite('example.com');
  if (!site) throw new Error('no site');
  const report = await reportSnapshot(conn, site, T0 + 86_400_000, { from: '2026-05-01', to: '2026-05-01' });
  const visits = (await scanAll(conn)).filter((i) => String(i.pk).startsWith('VIS#'));
  return { report, visits };
}

describe('objectRecords', () => {
  it('numbers each non-empty line n × 10^7 + line, whatever the line endings', () => {
    const records = objectRecords(3, Buffer.from('{"a":1}\n\n{"a":2}\n{"a":3}'));
    expect(records.map((r) => [r.sequenceNumber, r.data.toString()])).toEqual([
      ['30000000', '{"a":1}'],
      ['30000001', '{"a":2}'],
      ['30000002', '{"a":3}'],
    ]);
    expect(objectRecords(1, Buffer.alloc(0))).toEqual([]);
  });
});

describe('the sessionizer over raw objects (docs/ingestion.md, "Choosing the ingestion path")', () => {
  it('counts each event once whatever Firehose and S3 repeat: a record in two objects, an object notified twice, a replay journaled anew', async () => {
    const clean = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const cleanObjects = new Map([['raw/2026/05/01/10/ingest-a', lines(EVENTS)]]);
    await objectHandler(clean.conn, cleanObjects)(objectCreated('raw/2026/05/01/10/ingest-a'));
    const expected = await seen(clean.conn);
    expect(expected.report.overview).toMatchObject({ current: { pageviews: EVENTS.length, visitors: 4 } });
    await clean.close();

    const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const objects = new Map<string, Buffer>([
      // Firehose retried a delivery: events 4–7 are in both objects.
      ['raw/2026/05/01/10/ingest-1', lines(EVENTS.slice(0, 8))],
      ['raw/2026/05/01/10/ingest-2', lines(EVENTS.slice(4))],
    ]);
    const handler = objectHandler(db.conn, objects);
    // Notified out of order, the second twice.
    expect(await handler(objectCreated('raw/2026/05/01/10/ingest-2'))).toMatchObject({ journaled: 1, sessionized: 1 });
    expect(await handler(objectCreated('raw/2026/05/01/10/ingest-2'))).toMatchObject({ journaled: 0, sessionized: 0 });
    expect(await handler(objectCreated('raw/2026/05/01/10/ingest-1'))).toMatchObject({ journaled: 1, sessionized: 1 });
    // A crash between the journal number and the seen record journals an object again (a new key, as the sweep would).
    objects.set('raw/2026/05/01/10/ingest-1-again', objects.get('raw/2026/05/01/10/ingest-1') as Buffer);
    expect(await handler({})).toMatchObject({ journaled: 1, sessionized: 1, lines: 8 });
    expect(await seen(db.conn)).toEqual(expected);
    await db.close();
  });

  it('keeps the journal order through a failure: the failed object is retried first, under the same sequence numbers', async () => {
    const clean = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const cleanObjects = new Map([
      ['raw/2026/05/01/10/o1', lines(EVENTS.slice(0, 6))],
      ['raw/2026/05/01/10/o2', lines(EVENTS.slice(6))],
    ]);
    await objectHandler(clean.conn, cleanObjects)({});
    const expected = await seen(clean.conn);
    await clean.close();

    for (let k = 1; k < 40; k++) {
      const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
      const objects = new Map(cleanObjects);
      const send = db.conn.doc.send.bind(db.conn.doc);
      let writes = 0;
      db.conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
        if (command instanceof PutCommand && ++writes > k) throw new Error('crash');
        return (send as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof db.conn.doc.send;
      const archive = recordingArchive();
      const handler = objectHandler(db.conn, objects, archive);
      const first = await handler(objectCreated('raw/2026/05/01/10/o1')).catch((e: Error) => e);
      db.conn.doc.send = send;
      // The next invocation is another object's notification: the journal resumes with the failed one.
      await handler(objectCreated('raw/2026/05/01/10/o2'));
      await handler({});
      expect(await seen(db.conn), `crash after write ${k}`).toEqual(expected);
      // Forwarded once an object is sessionized: a crash while sessionizing forwards nothing twice.
      expect(archive.ids, `archived after a crash at write ${k}`).toEqual(EVENTS.map((e) => e.event_id));
      const journal = new DynamoIngestJournal(db.conn);
      expect(await journal.pending(await journal.done(), 10)).toEqual([]);
      await db.close();
      if (!(first instanceof Error)) break;
    }
  }, 240_000);

  it('forwards nothing of an object whose forward failed until its retry, which forwards it whole, and keeps it pending meanwhile', async () => {
    const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const objects = new Map([
      ['raw/2026/05/01/10/o1', lines(EVENTS.slice(0, 6))],
      ['raw/2026/05/01/10/o2', lines(EVENTS.slice(6))],
    ]);
    const ids: string[] = [];
    let refuse = true;
    const archive: ArchiveDelivery = {
      put: async (batch) => {
        if (refuse) throw new Error('ServiceUnavailableException');
        ids.push(...batch.map((l) => String(JSON.parse(l.toString()).event_id)));
      },
    };
    const handler = objectHandler(db.conn, objects, Object.assign(archive, { ids }));
    await expect(handler(objectCreated('raw/2026/05/01/10/o1'))).rejects.toThrow('ServiceUnavailableException');
    const journal = new DynamoIngestJournal(db.conn);
    expect((await journal.pending(await journal.done(), 10)).map((e) => e.key)).toEqual(['raw/2026/05/01/10/o1']);
    refuse = false;
    await handler(objectCreated('raw/2026/05/01/10/o2'));
    expect(ids).toEqual(EVENTS.map((e) => e.event_id));
    await db.close();
  });

  it('passes an object that expired before it was read, and stops before the timeout with the rest journaled', async () => {
    const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const objects = new Map([['raw/2026/05/01/10/o2', lines(EVENTS.slice(0, 3))]]);
    const handler = objectHandler(db.conn, objects);
    expect(await handler(objectCreated('raw/2026/05/01/10/o1'))).toMatchObject({ sessionized: 1, lines: 0 });
    expect(await handler(objectCreated('raw/2026/05/01/10/o2'), () => 1_000)).toMatchObject({
      journaled: 1,
      sessionized: 0,
    });
    expect(await handler({})).toMatchObject({ sessionized: 1, lines: 3 });
    const markers = (await scanAll(db.conn)).filter((i) => i.type === 'BATCH_MARKER');
    expect(markers.map((m) => m.pk)).toEqual([expect.stringContaining(DELIVERY_SHARD)]);
    await db.close();
  });
});
