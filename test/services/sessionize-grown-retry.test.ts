import { describe, expect, it } from 'vitest';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { plannedBatches } from '../../lambdas/handlers/sessionize.js';
import { sessionizeHandlerFor } from '../support/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import type { LocalStreamRecord } from '../../lambdas/adapters/local-stream.js';
import { toKinesisEvent } from '../../local/kinesis-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const T0 = Date.UTC(2026, 4, 1, 10);
const EVENTS: TrackedEvent[] = [
  trackedEvent({ event_id: 'g1', visitor_id: 'visitor-a', ts: T0, channel: 'Search' }),
  trackedEvent({ event_id: 'g2', visitor_id: 'visitor-b', ts: T0 + 60_000 }),
  trackedEvent({ event_id: 'g3', visitor_id: 'visitor-a', ts: T0 + 120_000, path: '/pricing' }),
  trackedEvent({ event_id: 'g4', visitor_id: 'visitor-c', ts: T0 + 180_000, country: 'FR' }),
  trackedEvent({ event_id: 'g5', visitor_id: 'visitor-a', ts: T0 + 240_000, path: '/signup' }),
  trackedEvent({ event_id: 'g6', visitor_id: 'visitor-d', ts: T0 + 300_000, channel: 'AI' }),
];
const record = (e: TrackedEvent, i: number): LocalStreamRecord => ({
  sequenceNumber: String(100 + i),
  partitionKey: e.visitor_id,
  approximateArrivalTimestamp: T0,
  data: Buffer.from(JSON.stringify(e)),
});
const RECORDS = EVENTS.map(record);

const handlerFor = (conn: DynamoConnection) => sessionizeHandlerFor(conn);

describe('a retry that arrives with more records than the attempt that failed', () => {
  it('plans the old batch again first, then the rest', () => {
    const recs = ['5', '6', '7', '8'].map((sequence) => ({ sequence }));
    expect(plannedBatches(recs, null)).toEqual([recs]);
    expect(plannedBatches(recs, { first: '5', last: '6' })).toEqual([recs.slice(0, 2), recs.slice(2)]);
    expect(plannedBatches(recs, { first: '5', last: '8' })).toEqual([recs]);
    expect(plannedBatches(recs, { first: '5', last: '9' })).toEqual([recs]);
    expect(plannedBatches(recs, { first: '4', last: '6' })).toEqual([recs]);
  });

  it('ends as a clean run whatever write the first attempt died at', async () => {
    const clean = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const handler = handlerFor(clean.conn);
    expect((await handler(toKinesisEvent(RECORDS.slice(0, 4)))).batchItemFailures).toEqual([]);
    expect((await handler(toKinesisEvent(RECORDS.slice(4)))).batchItemFailures).toEqual([]);
    const expected = await scanAll(clean.conn, ['created']);
    await clean.close();

    for (let k = 1; k < 30; k++) {
      const db = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
      const send = db.conn.doc.send.bind(db.conn.doc);
      let writes = 0;
      db.conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
        if ((command instanceof PutCommand || command instanceof BatchWriteCommand) && ++writes > k)
          throw new Error('crash');
        return (send as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof db.conn.doc.send;
      const handler = handlerFor(db.conn);
      const failed = await handler(toKinesisEvent(RECORDS.slice(0, 4)));
      db.conn.doc.send = send;
      if (failed.batchItemFailures.length === 0) {
        // k is past the batch's last write: nothing to retry.
        await db.close();
        break;
      }
      expect(failed.batchItemFailures).toEqual([{ itemIdentifier: '100' }]);
      // The mapping retries from the first record, and the shard has grown meanwhile.
      expect((await handler(toKinesisEvent(RECORDS))).batchItemFailures).toEqual([]);
      expect(await scanAll(db.conn, ['created']), `crash after write ${k}`).toEqual(expected);
      await db.close();
    }
  }, 120_000);
});
