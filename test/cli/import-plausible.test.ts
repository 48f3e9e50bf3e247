import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess } from '../support/cli.js';
import { DAYS, UNTIL, plausibleZip } from '../fixtures/plausible-export.js';

describe('footfall import plausible', () => {
  let dataDir = '';
  let zip = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-plausible-'));
    zip = join(dataDir, 'example_com_20250202.zip');
    await writeFile(zip, plausibleZip());
    expect((await runCliInProcess(['--data', dataDir, 'accounts', 'add', 'acme'])).status).toBe(0);
    expect(
      (
        await runCliInProcess([
          '--data',
          dataDir,
          'sites',
          'add',
          'example.com',
          '--timezone',
          'UTC',
          '--account',
          'acme',
        ])
      ).status,
    ).toBe(0);
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('imports the zip up to the cut-over day, says what it read, kept and skipped, and removes it in one step', async () => {
    const base = ['--data', dataDir, 'import', 'plausible', '--site', 'example.com'];
    const text = await runCliInProcess([...base, zip, '--until', UNTIL]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain('read 39 rows in 10 files: 34 kept, 4 skipped (on or after 2025-02-02), 1 invalid');
    expect(text.stdout).toContain(`imported ${DAYS[0]} to ${DAYS[2]} into example.com`);

    const removed = await runCliInProcess(['--json', ...base, '--remove']);
    expect(removed.status, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout).deleted).toBeGreaterThan(1);
    expect(JSON.parse((await runCliInProcess(['--json', ...base, '--remove'])).stdout).deleted).toBe(0);
  });

  it('refuses an export without --until, and a file that is no zip (exit 2, one line)', async () => {
    const base = ['--data', dataDir, 'import', 'plausible', '--site', 'example.com'];
    expect(await runCliInProcess([...base, zip])).toMatchObject({
      status: 2,
      stderr: 'error: --until: is required with an export\n',
    });
    const notZip = join(dataDir, 'export.zip');
    await writeFile(notZip, 'date,visitors\n');
    const result = await runCliInProcess([...base, notZip, '--until', UNTIL]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^error: .*export\.zip: not a zip archive/);
  });
});
