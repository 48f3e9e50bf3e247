import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, runCliInProcess, startServeProcess } from '../support/cli.js';

describe('footfall CLI: accounts and sites', () => {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-cli-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));
  // In this process: these tests are about what the commands do; serve runs as a process of its own below.
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);

  it('adds an account and a site, and lists sites as text and JSON', async () => {
    expect(await cli('accounts', 'add', 'acme')).toMatchObject({ status: 0, stdout: 'account acme added\n' });
    const added = await cli(
      '--json',
      'sites',
      'add',
      'Example.com',
      '--timezone',
      'Europe/Berlin',
      '--account',
      'acme',
      '--attribution',
      'first_touch',
      '--lookback-days',
      '14',
    );
    expect(added.status).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({
      domain: 'example.com',
      timezone: 'Europe/Berlin',
      account: 'acme',
      attribution: 'first_touch',
      lookback_days: 14,
      rate_limit: 1000,
    });
    expect((await cli('sites', 'add', 'shop.example.org', '--timezone', 'UTC', '--account', 'acme')).status).toBe(0);
    const list = await cli('sites', 'list', '--json');
    expect(JSON.parse(list.stdout).map((s: { domain: string }) => s.domain)).toEqual([
      'example.com',
      'shop.example.org',
    ]);
    const text = await cli('sites', 'list');
    expect(text.stdout).toMatch(/^DOMAIN\s+TIMEZONE\s+ACCOUNT\s+ATTRIBUTION/);
    expect(text.stdout).toContain('shop.example.org  UTC');
  });

  it('changes a site with sites set and keeps the other settings', async () => {
    const set = await cli('--json', 'sites', 'set', 'example.com', '--attribution', 'last_touch');
    expect(set.status).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      attribution: 'last_touch',
      lookback_days: 14,
      timezone: 'Europe/Berlin',
    });
  });

  it.each([
    [['sites', 'add', 'x.com', '--timezone', 'Mars/Olympus', '--account', 'acme'], /timezone/],
    [['sites', 'add', 'not a domain', '--timezone', 'UTC', '--account', 'acme'], /domain/],
    [['sites', 'add', 'x.com', '--account', 'acme'], /--timezone/],
    [['sites', 'add', 'x.com', '--timezone', 'UTC', '--account', 'acme', '--attribution', 'linear'], /attribution/],
    [
      ['sites', 'add', 'x.com', '--timezone', 'UTC', '--account', 'acme', '--lookback-days', 'ten'],
      /--lookback-days "ten" is not valid/,
    ],
    [['accounts', 'add', 'bad id!'], /letters/],
    [['sites', 'frobnicate'], /unknown command/],
    [['serve', '--port', 'http'], /--port "http" is not valid/],
  ])('exits 2 with one line for bad arguments: %j', async (args, message) => {
    const result = await cli(...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 1 with one line when the operation fails', async () => {
    const dup = await cli('accounts', 'add', 'acme');
    expect(dup.status).toBe(1);
    expect(dup.stderr).toBe('error: account acme already exists\n');
    const orphan = await cli('sites', 'add', 'y.com', '--timezone', 'UTC', '--account', 'nobody');
    expect(orphan.status).toBe(1);
    expect(orphan.stderr).toContain('account nobody does not exist');
  });

  it('has --help on every command', async () => {
    for (const args of [
      [],
      ['serve'],
      ['accounts'],
      ['accounts', 'add'],
      ['sites'],
      ['sites', 'add'],
      ['sites', 'list'],
      ['sites', 'set'],
    ]) {
      const result = await cli(...args, '--help');
      expect(result.status, args.join(' ')).toBe(0);
      expect(result.stdout).toContain('Usage: footfall');
    }
  });

  it('admin commands work while serve runs on the same data directory, and serve sees their changes', async () => {
    const { child, url } = await startServeProcess(dataDir);
    try {
      expect((await cli('accounts', 'add', 'beta')).status).toBe(0);
      expect((await cli('sites', 'add', 'beta.io', '--timezone', 'Asia/Tokyo', '--account', 'beta')).status).toBe(0);
      expect(
        JSON.parse((await cli('--json', 'sites', 'list')).stdout).map((s: { domain: string }) => s.domain),
      ).toContain('beta.io');
      const res = await fetch(`${url}/api/event`, {
        method: 'POST',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0' },
        body: JSON.stringify({ n: 'pageview', u: 'https://beta.io/', s: 'beta.io' }),
      });
      expect(res.status).toBe(202);
      // A second serve is a process of its own: refusing to start is about the process, so it runs as one.
      const second = runCli(['--data', dataDir, 'serve', '--port', '0']);
      expect(second.status).toBe(1);
      expect(second.stderr).toContain('already runs');
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('footfall keys', () => {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-keys-'));
    await runCliInProcess(['--data', dataDir, 'accounts', 'add', 'acme']);
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);

  it('creates a key shown once, lists keys without it, and revokes it', async () => {
    const created = await cli('--json', 'keys', 'create', '--account', 'acme', '--name', 'laptop');
    expect(created.status, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{12}$/),
      key: expect.stringMatching(/^ff_[A-Za-z0-9_-]{43}$/),
      account: 'acme',
      name: 'laptop',
      created: expect.any(String),
    });
    const listed = await cli('--json', 'keys', 'list');
    expect(listed.stdout).not.toContain(key.key);
    expect(JSON.parse(listed.stdout)).toEqual([
      { id: key.id, account: 'acme', name: 'laptop', created: key.created, last_used: null, revoked: null },
    ]);
    expect((await cli('keys', 'revoke', key.id)).stdout).toContain('revoked');
    expect(JSON.parse((await cli('--json', 'keys', 'list')).stdout)[0].revoked).toEqual(expect.any(String));
    expect((await cli('keys', 'revoke', 'key_000000000000')).status).toBe(1);
    expect((await cli('keys', 'create', '--account', 'nobody')).status).toBe(1);
  });
});
