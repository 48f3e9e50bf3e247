import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROME_UA } from '../support/events.js';
import { runCliInProcess } from '../support/cli.js';
import { scanAll } from '../support/dynamo.js';
import { openLocalStore } from '../../local/service.js';
import { DynamoErasureStore } from '../../lambdas/adapters/dynamo/erasure-store.js';
import { newErasureRequest } from '../../lambdas/services/erasure-requests.js';

/** `footfall erase --pending`: what the app queued, carried out with the operator's credentials until none is left. */
describe('footfall erase --pending (CLI)', async () => {
  let dataDir = '';
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);
  const withStore = async <T>(fn: (store: DynamoErasureStore, all: () => Promise<string>) => Promise<T>) => {
    const { dynamo, db } = await openLocalStore(dataDir, 'cli');
    try {
      return await fn(new DynamoErasureStore(dynamo), async () => JSON.stringify(await scanAll(dynamo)));
    } finally {
      dynamo.doc.destroy();
      await db.close();
    }
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-erase-cli-'));
    expect((await cli('accounts', 'add', 'acme')).status).toBe(0);
    expect((await cli('sites', 'add', 'example.com', '--timezone', 'UTC', '--account', 'acme')).status).toBe(0);
    const lines = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({
        n: 'pageview',
        u: `https://example.com/p${i % 4}`,
        ts: new Date(Date.UTC(2026, 10, 2, 9) + i * 11 * 60_000).toISOString(),
        v: `visitor-${String(i % 3).padStart(4, '0')}`,
        ua: CHROME_UA,
      }),
    );
    const file = join(dataDir, 'events.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);
    expect((await cli('import', 'events', file, '--site', 'example.com')).status).toBe(0);
  }, 240_000);
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('erases the queued visitor, writes the record, empties the queue; a second run finds nothing', async () => {
    const visitor = 'visitor-0001';
    await withStore(async (store, all) => {
      expect(await all()).toContain(visitor);
      await store.add(
        newErasureRequest('example.com', { kind: 'visitor', id: visitor, confirm: 'example.com' }, Date.now(), 'r1'),
      );
    });
    const run = await cli('--json', 'erase', '--pending');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ erasures: 1, deletions: 0 });
    await withStore(async (store, all) => {
      expect(await store.pending()).toEqual([]);
      expect(await store.records('example.com', 5)).toMatchObject([{ kind: 'visitor', visitors: 1 }]);
      expect(await all()).not.toContain(visitor);
      expect(await all()).toContain('visitor-0002');
    });
    expect((await cli('erase', '--pending')).stdout).toMatch(
      /^0 erasures and 0 site deletions finished; none is queued$/m,
    );
  }, 240_000);
});
