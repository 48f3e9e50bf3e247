import { describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEventStream, type LogFile } from '../../lambdas/adapters/local-stream.js';
import { trackedEvent } from '../support/events.js';

/**
 * A file layer that loses what was not synced, as a power cut would (issue
 * 18.8): `write` goes to a page cache, only `datasync` makes it durable, and
 * `powerLoss()` returns what survives. A `kill -9` keeps the page cache, so the
 * crash tests cannot see a missing fsync; this can.
 */
function volatileFile() {
  let cache = Buffer.alloc(0);
  let durable = Buffer.alloc(0);
  let releaseSync: (() => void) | null = null;
  let holdSyncs = false;
  const file: LogFile = {
    write: (async (buffer: Buffer, offset = 0) => {
      const part = buffer.subarray(offset);
      cache = Buffer.concat([cache, part]);
      return { bytesWritten: part.length, buffer };
    }) as LogFile['write'],
    datasync: async () => {
      if (holdSyncs) await new Promise<void>((resolve) => (releaseSync = resolve));
      durable = Buffer.from(cache);
    },
    close: async () => undefined,
  };
  return {
    open: async () => file,
    powerLoss: () => durable.toString('utf8'),
    holdSyncs: () => (holdSyncs = true),
    releaseSync: () => releaseSync?.(),
  };
}

describe('LocalEventStream durability (a 202 only for events on disk)', () => {
  it('every acknowledged put survives a power cut', async () => {
    const disk = volatileFile();
    const stream = await LocalEventStream.open(await mkdtemp(join(tmpdir(), 'ff-dur-')), () => 0, disk.open);
    const events = Array.from({ length: 20 }, (_, i) => trackedEvent({ event_id: `dur-${i}` }));
    await Promise.all(events.map((e) => stream.put([e])));
    const survived = disk.powerLoss();
    for (const e of events) expect(survived, e.event_id).toContain(`"${e.event_id}"`);
  });

  it('does not acknowledge a put before its data is synced', async () => {
    const disk = volatileFile();
    const stream = await LocalEventStream.open(await mkdtemp(join(tmpdir(), 'ff-dur-')), () => 0, disk.open);
    disk.holdSyncs();
    let acknowledged = false;
    const put = stream.put([trackedEvent({ event_id: 'held' })]).then(() => (acknowledged = true));
    // Let the write reach the page cache; the sync is held.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(acknowledged).toBe(false);
    expect(disk.powerLoss()).not.toContain('"held"');
    disk.releaseSync();
    await put;
    expect(acknowledged).toBe(true);
    expect(disk.powerLoss()).toContain('"held"');
  });
});
