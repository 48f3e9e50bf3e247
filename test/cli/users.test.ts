import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI, runCliInProcess } from '../support/cli.js';

const run = promisify(execFile);
import { startLocalService } from '../../local/service.js';
import { AppClient } from '../support/app-client.js';

/** `footfall users add|link|list`: the first user of an account, made from the CLI (`docs/app.md` "First sign-in"). */
describe('footfall users', async () => {
  let dir: string;
  const cli = (...args: string[]) => runCliInProcess(['--data', dir, ...args]);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-users-'));
    expect((await cli('accounts', 'add', 'acme')).status).toBe(0);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('adds a user and prints a one-time link that sets the password and signs in, once', async () => {
    const added = await cli(
      '--json',
      'users',
      'add',
      'Ana@Example.com',
      '--account',
      'acme',
      '--url',
      'https://stats.example.com/',
    );
    expect(added.status, added.stderr).toBe(0);
    const out = JSON.parse(added.stdout) as { email: string; account: string; link: string; expires_in_days: number };
    // The account's first user is its owner; later ones are members unless --role says otherwise.
    expect(out).toMatchObject({ email: 'ana@example.com', account: 'acme', role: 'owner', expires_in_days: 7 });
    expect(out.link).toMatch(/^https:\/\/stats\.example\.com\/invite\/[A-Za-z0-9_-]{43}$/);
    const text = await cli('users', 'add', 'bo@example.com', '--account', 'acme');
    expect(text.stdout).toMatch(/^http:\/\/127\.0\.0\.1:8787\/invite\/[A-Za-z0-9_-]{43}\n/);

    expect(await cli('users', 'add', 'ana@example.com', '--account', 'acme')).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('already has a user'),
    });
    expect(await cli('users', 'add', 'cy@example.com', '--account', 'nope')).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('does not exist'),
    });
    expect((await cli('users', 'add', 'not-an-email', '--account', 'acme')).status).toBe(2);
    expect(JSON.parse((await cli('--json', 'users', 'list', '--account', 'acme')).stdout)).toEqual([
      { email: 'ana@example.com', created: expect.any(String), status: 'invited', role: 'owner' },
      { email: 'bo@example.com', created: expect.any(String), status: 'invited', role: 'member' },
    ]);

    const svc = await startLocalService({
      dataDir: dir,
      port: 0,
      app: true,
      sessionizeIntervalMs: 0,
      dynaliteThread: false,
    });
    try {
      const token = out.link.split('/').pop()!;
      const ana = new AppClient(svc.url);
      expect((await ana.call('GET', `/api/app/invites/${token}`)).body).toEqual({
        email: 'ana@example.com',
        account: { id: 'acme', name: 'acme' },
      });
      expect((await ana.call('POST', `/api/app/invites/${token}`, { password: 'ana-password-1' })).status).toBe(200);
      expect((await ana.call('GET', '/api/app/me')).status).toBe(200);
      expect(
        (await new AppClient(svc.url).call('POST', `/api/app/invites/${token}`, { password: 'other-password' })).status,
      ).toBe(404);
      // While serve runs (here, in this process: the command must not block it), a link points at it.
      const { stdout } = await run(process.execPath, [CLI, '--data', dir, 'users', 'link', 'ana@example.com'], {
        env: { ...process.env, FOOTFALL_DATA: '', PORT: '' },
      });
      expect(stdout.startsWith(`${svc.url}/invite/`)).toBe(true);
    } finally {
      await svc.close();
    }
  }, 180_000);

  it('users role: the last owner stays an owner; roles show in the list', async () => {
    expect((await cli('users', 'add', 'cy@example.com', '--account', 'acme', '--role', 'admin')).status).toBe(2);
    expect((await cli('users', 'add', 'ed@example.com', '--account', 'acme', '--role', 'owner')).status).toBe(0);
    expect((await cli('users', 'role', 'ana@example.com', '--role', 'member')).status).toBe(0);
    expect(await cli('users', 'role', 'ed@example.com', '--role', 'member')).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('last owner'),
    });
    expect((await cli('users', 'role', 'bo@example.com', '--role', 'owner')).stdout).toContain(
      'bo@example.com is now owner',
    );
    expect(JSON.parse((await cli('--json', 'users', 'list', '--account', 'acme')).stdout)).toMatchObject([
      { email: 'ana@example.com', role: 'member' },
      { email: 'bo@example.com', role: 'owner' },
      { email: 'ed@example.com', role: 'owner' },
    ]);
  }, 360_000);
});
