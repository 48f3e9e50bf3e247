import { afterAll, describe, expect, it } from 'vitest';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEventStream, STREAM_FILE, readLocalStream } from '../../lambdas/adapters/local-stream.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { createArchiveConsumer } from '../../local/archive.js';
import { localPaths } from '../../local/service.js';
import { runSql } from '../../local/sql.js';
import { LocalStreamPoller } from '../../local/stream-poller.js';
import { DATASET, expectedRow, rowObjects } from './dataset.js';

describe('stream → archive → SQL, end to end', () => {
  let dataDir = '';
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('archives what was put on the local stream, batch by batch, and skips what it cannot read', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-pipeline-'));
    const paths = localPaths(dataDir);
    const stream = await LocalEventStream.open(paths.stream);
    const skipped: string[] = [];
    const consumer = createArchiveConsumer(paths.archive, { onSkip: (s) => skipped.push(s.reason) });
    const poller = new LocalStreamPoller(paths.stream, 'archive', consumer, { batchSize: 4 });
    try {
      await stream.put(DATASET.slice(0, 6));
      // An event the schema rejects (as an older or buggy writer could produce) must not block the stream.
      await stream.put([{ ...DATASET[0]!, event_id: 'bad', type: 'click' } as unknown as TrackedEvent]);
      await stream.put(DATASET.slice(6));
      expect(await poller.drain()).toBe(DATASET.length + 1);
      expect(skipped).toEqual([expect.stringMatching(/^not a tracked event \(type: /)]);

      const all = await runSql(paths.archive, 'SELECT * FROM events ORDER BY ts, event_id');
      const inOrder = [...DATASET].sort((a, b) => a.ts - b.ts || a.event_id.localeCompare(b.event_id));
      expect(rowObjects(all)).toEqual(inOrder.map(expectedRow));

      // Nothing new: a drain does nothing. A torn line (crash mid-write) is skipped by the reader.
      expect(await poller.drain()).toBe(0);
      await appendFile(join(paths.stream, STREAM_FILE), '\ndeadbeef\t0\tx\t{"torn');
      const late = { ...DATASET[0]!, event_id: 'late', ts: Date.UTC(2026, 0, 14, 23, 0) };
      await stream.put([late]);
      expect(await poller.drain()).toBe(1);
      const count = await runSql(
        paths.archive,
        "SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events WHERE dt = '2026-01-14'",
      );
      expect(count.rows).toEqual([[6, 6]]);
    } finally {
      await poller.stop();
      await consumer.close();
      await stream.close();
    }
  });

  it('a batch re-delivered after a crash between writing and checkpointing adds no duplicates, even when it grew', async () => {
    const paths = localPaths(dataDir);
    const before = await runSql(paths.archive, 'SELECT count(*) AS n FROM events');
    // As if the process died right after writing the last batch's files: its checkpoint is back at that batch's start.
    const { records } = await readLocalStream(paths.stream, 0, 1000);
    const lastBatch = records.find((r) => JSON.parse(r.data.toString()).event_id === 'late')!;
    await writeFile(
      join(paths.stream, 'checkpoints', 'archive.json'),
      JSON.stringify({ offset: Number(lastBatch.sequenceNumber) }),
    );
    // Meanwhile the log grew, so the re-delivered batch starts at the same record and carries one more.
    const stream = await LocalEventStream.open(paths.stream);
    await stream.put([{ ...DATASET[0]!, event_id: 'later', ts: Date.UTC(2026, 0, 14, 23, 30) }]);
    await stream.close();
    const consumer = createArchiveConsumer(paths.archive);
    const poller = new LocalStreamPoller(paths.stream, 'archive', consumer, { batchSize: 4 });
    try {
      expect(await poller.drain()).toBe(2);
      expect(
        (await runSql(paths.archive, 'SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events')).rows,
      ).toEqual([[(before.rows[0]![0] as number) + 1, (before.rows[0]![0] as number) + 1]]);
    } finally {
      await consumer.close();
    }
  });
});
