import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalService, type LocalService } from '../../local/service.js';
import { DEMO_SITE, seedDemo } from '../../local/demo/seed.js';
import { main } from '../../cli/main.js';

/** The README's SQL example: the `npx footfall sql "…"` command that groups by the visit's channel. */
async function readmeQuery(): Promise<string> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const queries = [...readme.matchAll(/npx footfall sql "([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((q) => q.includes('visit_channel'));
  expect(queries, "the README has one SQL example by the visit's channel").toHaveLength(1);
  return queries[0]!;
}

/** `footfall --json sql <query>` in this process (it only reads the archive's files); returns the rows. */
async function footfallSql(dataDir: string, query: string): Promise<Array<Record<string, unknown>>> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    expect(await main(['--data', dataDir, '--json', 'sql', query]), stderr).toBe(0);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return JSON.parse(stdout) as Array<Record<string, unknown>>;
}

/**
 * The README's SQL example must agree with the reports. It once ran
 * over each event's own channel (63% Direct) while the channel breakdown
 * counts visits by their first event's channel. On a generated site (the
 * demo, through the real import and webhook paths, sessionized and archived),
 * the README's query through `footfall sql` gives the breakdown's visits per
 * channel exactly.
 */
describe('README SQL example', () => {
  let dataDir = '';
  let service: LocalService;
  let key = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-readme-sql-'));
    service = await startLocalService({ dataDir, port: 0, app: true, sessionizeIntervalMs: 0, dynaliteThread: false });
    key = (await seedDemo(service, { days: 10, visitsPerDay: 25 })).key;
    await service.sessionize();
    await service.archive();
  }, 110_000);
  afterAll(async () => {
    await service?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('counts the visits of each channel as breakdown/channel does', async () => {
    const rows = await footfallSql(dataDir, await readmeQuery());
    const res = await fetch(`${service.url}/api/v1/sites/${DEMO_SITE}/breakdown/channel?range=all&limit=1000`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const breakdown = (await res.json()) as {
      rows: Array<{ key: string | null; unattributed: boolean; visitors: number }>;
    };
    const reported = Object.fromEntries(
      breakdown.rows.filter((r) => !r.unattributed && r.visitors > 0).map((r) => [r.key, r.visitors]),
    );
    const queried = Object.fromEntries(rows.map((r) => [r.channel, r.visits]));
    expect(Object.keys(reported).length, 'a generated site has several channels').toBeGreaterThan(3);
    expect(queried).toEqual(reported);
    // Page views by the visit's channel add up to every page view archived.
    const [{ n }] = (await footfallSql(
      dataDir,
      `SELECT count(*) AS n FROM events WHERE site = '${DEMO_SITE}' AND type = 'pageview'`,
    )) as [{ n: number }];
    expect(rows.reduce((sum, r) => sum + Number(r.pageviews), 0)).toBe(n);
  });
});
