import { describe, expect, it } from 'vitest';
import { readdir, rm } from 'node:fs/promises';
import { CHROME_UA } from '../support/events.js';
import { startTestService } from '../support/local.js';

describe('closing the local service', () => {
  it('waits for the scheduled run under way, so the data directory can be removed once close resolves', async () => {
    const svc = await startTestService([{ domain: 'example.com' }], { sessionizeIntervalMs: 0 });
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${svc.url}/api/event`, {
        method: 'POST',
        headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' },
        body: JSON.stringify({ n: 'pageview', u: `https://example.com/p${i}`, s: 'example.com', v: `visitor-${i}` }),
      });
      expect(res.status).toBe(202);
    }
    await svc.sessionize();
    await svc.archive();
    let settled = false;
    // The run refreshes the visit table, writing its files (what the schedule does every few seconds).
    const run = svc.scheduled().finally(() => (settled = true));
    await svc.close();
    // A run still writing after close would race the removal below (ENOTEMPTY) and write into a removed directory.
    expect(settled).toBe(true);
    // It ran to its end against a live table: a run cut off by the close fails its compaction.
    expect(await run).toMatchObject({ sites: 1, compacted: 1 });
    await rm(svc.dataDir, { recursive: true, force: true });
    await expect(readdir(svc.dataDir)).rejects.toThrow(/ENOENT/);
  });
});
