import { afterEach, describe, expect, it } from 'vitest';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEventStream, STREAM_FILE, readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { partitionKey } from '../../lambdas/adapters/stream-record.js';
import { trackedEventSchema } from '../../lambdas/domain/tracked-event.js';
import { trackedEvent } from '../support/events.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ff-stream-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('LocalEventStream', () => {
  it('writes events that read back in order, with increasing sequence numbers and the partition key', async () => {
    const dir = await tempDir();
    const stream = await LocalEventStream.open(dir, () => 1234);
    const events = Array.from({ length: 5 }, (_, i) => trackedEvent({ path: `/${i}`, visitor_id: `visitor-${i}000` }));
    await stream.put(events.slice(0, 2));
    await stream.put(events.slice(2));
    await stream.close();

    const { records, corrupt } = await readLocalStream(dir, 0, 100);
    expect(corrupt).toBe(0);
    expect(records.map((r) => trackedEventSchema.parse(JSON.parse(r.data.toString())))).toEqual(events);
    expect(records.map((r) => r.partitionKey)).toEqual(events.map(partitionKey));
    expect(records.every((r) => r.approximateArrivalTimestamp === 1234)).toBe(true);
    const seqs = records.map((r) => r.sequenceNumber);
    expect([...seqs].sort()).toEqual(seqs);
    expect(new Set(seqs).size).toBe(5);
  });

  it('group-commits concurrent puts and loses none', async () => {
    const dir = await tempDir();
    const stream = await LocalEventStream.open(dir);
    await Promise.all(Array.from({ length: 200 }, (_, i) => stream.put([trackedEvent({ path: `/p${i}` })])));
    await stream.close();
    const { records } = await readLocalStream(dir, 0, 1000);
    expect(new Set(records.map((r) => JSON.parse(r.data.toString()).path)).size).toBe(200);
  });

  it('pages with maxRecords and nextOffset, and resumes exactly where it stopped', async () => {
    const dir = await tempDir();
    const stream = await LocalEventStream.open(dir);
    await stream.put(Array.from({ length: 10 }, (_, i) => trackedEvent({ path: `/${i}` })));
    const first = await readLocalStream(dir, 0, 4);
    const second = await readLocalStream(dir, first.nextOffset, 100);
    expect(first.records).toHaveLength(4);
    expect(second.records).toHaveLength(6);
    expect((second.records[0]?.sequenceNumber ?? '') > (first.records[3]?.sequenceNumber ?? '')).toBe(true);
    const again = await readLocalStream(dir, second.nextOffset, 100);
    expect(again.records).toHaveLength(0);
    await stream.put([trackedEvent({ path: '/late' })]);
    await stream.close();
    const late = await readLocalStream(dir, second.nextOffset, 100);
    expect(late.records.map((r) => JSON.parse(r.data.toString()).path)).toEqual(['/late']);
  });

  it('skips a line torn by a crash and keeps what follows; leaves an unfinished last line for later', async () => {
    const dir = await tempDir();
    const stream = await LocalEventStream.open(dir);
    await stream.put([trackedEvent({ path: '/before' })]);
    // A crash mid-write leaves half a line without a newline.
    await appendFile(join(dir, STREAM_FILE), '\n0badc0de\t123\texample.com/x\t{"trunc');
    const partial = await readLocalStream(dir, 0, 100);
    expect(partial.records.map((r) => JSON.parse(r.data.toString()).path)).toEqual(['/before']);
    // The next writer starts with a newline, which closes the torn line.
    await stream.put([trackedEvent({ path: '/after' })]);
    await stream.close();
    const { records, corrupt } = await readLocalStream(dir, partial.nextOffset, 100);
    expect(records.map((r) => JSON.parse(r.data.toString()).path)).toEqual(['/after']);
    expect(corrupt).toBe(1);
  });

  it('reads nothing from a missing log', async () => {
    const dir = await tempDir();
    expect(await readLocalStream(join(dir, 'nope'), 0, 10)).toEqual({ records: [], nextOffset: 0, corrupt: 0 });
  });
});
