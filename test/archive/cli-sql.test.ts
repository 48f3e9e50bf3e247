import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createArchiveConsumer } from '../../local/archive.js';
import { localPaths } from '../../local/service.js';
import { runCliInProcess } from '../support/cli.js';
import { DATASET, recordsOf } from './dataset.js';

describe('footfall sql', async () => {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-cli-sql-'));
    const consumer = createArchiveConsumer(localPaths(dataDir).archive);
    await consumer(recordsOf(DATASET));
    await consumer.close();
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);
  const perSite = 'SELECT site, count(*) AS events, min(ts) AS first FROM events GROUP BY site ORDER BY site';

  it('prints an aligned table', async () => {
    const result = await cli('sql', perSite);
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'SITE              EVENTS  FIRST',
        'example.com       10      2026-01-14T08:00:00.000Z',
        'shop.example.org  2       2026-01-14T12:00:00.000Z',
        '',
      ].join('\n'),
    );
  });

  it('prints an array of row objects with --json', async () => {
    const result = await cli('sql', perSite, '--json');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      { site: 'example.com', events: 10, first: '2026-01-14T08:00:00.000Z' },
      { site: 'shop.example.org', events: 2, first: '2026-01-14T12:00:00.000Z' },
    ]);
  });

  it('shows nulls as - in text, keeps repeated column names apart, and says (none) for no rows', async () => {
    const text = await cli('sql', "SELECT goal, link FROM events WHERE event_id = 'a1'");
    expect(text.stdout).toBe('GOAL  LINK\n-     -\n');
    expect(JSON.parse((await cli('--json', 'sql', 'SELECT 1 AS n, 2 AS n')).stdout)).toEqual([{ n: 1, n_2: 2 }]);
    expect((await cli('sql', "SELECT * FROM events WHERE site = 'nobody.example'")).stdout).toBe('(none)\n');
  });

  it('exits 2 with one line on stderr when DuckDB rejects the query', async () => {
    for (const query of ['SELEC 1', 'SELECT nope FROM events', '   ']) {
      const result = await cli('sql', query);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await cli('sql', 'SELECT nope FROM events')).stderr).toMatch(
      /^error: Binder Error: Referenced column "nope" not found/,
    );
  });

  it('works on a data directory with no archive yet', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ff-cli-sql-empty-'));
    try {
      const result = await runCliInProcess(['--data', empty, '--json', 'sql', 'SELECT count(*) AS n FROM events']);
      expect(result.status).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual([{ n: 0 }]);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
