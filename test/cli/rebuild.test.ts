import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROME_UA } from '../support/events.js';
import { runCliInProcess } from '../support/cli.js';

/** `footfall rebuild` as a user runs it: progress on stderr, the summary on stdout (text or JSON), errors in one line. */
describe('footfall rebuild (CLI)', async () => {
  let dataDir = '';
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-rebuild-cli-'));
    expect((await cli('accounts', 'add', 'acme')).status).toBe(0);
    expect((await cli('sites', 'add', 'example.com', '--timezone', 'UTC', '--account', 'acme')).status).toBe(0);
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({
        n: 'pageview',
        u: `https://example.com/p${i % 4}`,
        r: i % 3 === 0 ? 'https://chatgpt.com/' : undefined,
        ts: new Date(Date.UTC(2026, 10, 2, 9) + i * 11 * 60_000).toISOString(),
        v: `visitor-${String(i % 6).padStart(4, '0')}`,
        ua: CHROME_UA,
      }),
    );
    const file = join(dataDir, 'events.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);
    expect((await cli('import', 'events', file, '--site', 'example.com')).status).toBe(0);
  }, 240_000);
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('builds generation 1 beside generation 0 and switches, with plain progress lines when stderr is not a terminal', async () => {
    const run = await cli('rebuild', '--site', 'example.com');
    expect(run.stderr).not.toContain('error');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^example\.com: rebuilding \(live data: example\.com\)$/m);
    expect(run.stdout).toMatch(
      /^example\.com: generation 1 is live \(replaced 0\): 30 events from 2026-11-02 to \S+ sessionized, 0 payments credited, \d+ items of the old generation deleted$/m,
    );
    // One line per phase start and per tenth, no carriage returns.
    expect(run.stderr).not.toContain('\r');
    for (const phase of [
      'waiting for writers',
      'reading archive',
      'sessionizing',
      'crediting payments',
      'switching',
      'cleaning up',
    ])
      expect(run.stderr).toMatch(new RegExp(`^${phase}`, 'm'));
    expect(run.stderr).toMatch(/^sessionizing {2}30 events .*100%$/m);
  }, 120_000);

  it('prints a JSON summary with --json, and the next rebuild builds the next generation', async () => {
    const run = await cli('--json', 'rebuild');
    expect(run.status).toBe(0);
    const [summary] = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(summary).toMatchObject({
      site: 'example.com',
      generation: 2,
      replaced: 1,
      resumed: false,
      from: '2026-11-02',
      events: 30,
      batches: 1,
      payments: 0,
    });
    expect(summary?.deleted).toBeGreaterThan(10);
    expect(run.stderr).toBe('');
  }, 120_000);

  it('says there is nothing to abandon when no rebuild runs, and names the options --aws needs', async () => {
    const abandon = await cli('rebuild', '--site', 'example.com', '--abandon');
    expect(abandon.status).toBe(1);
    expect(abandon.stderr).toBe('error: example.com: no rebuild is running (live generation 2); nothing to abandon\n');
    const aws = await cli('--aws', '--table', 'footfall-table', 'rebuild');
    expect(aws.status).toBe(2);
    expect(aws.stderr).toContain('--athena-workgroup and --glue-database: are required with --aws');
  }, 120_000);
});
