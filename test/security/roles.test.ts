import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { APP_ROUTE_ACCESS } from '../../lambdas/handlers/app.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { DynamoUserStore, ROLE_LOCK_MS } from '../../lambdas/adapters/dynamo/user-store.js';
import { PARTITIONS } from '../../lambdas/adapters/dynamo/items.js';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { hashPassword } from '../../lambdas/domain/auth/password.js';
import { OWNERS_ONLY, setUserRole } from '../../lambdas/services/account-settings.js';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';

/** Owner and member roles on every app route (docs/security.md, "Roles"); the account's last owner kept. */

const SITE = 'roles.test';
const PASSWORD = 'a-password-123';
const OWNER = 'olga@acme.test';
const MEMBER = 'milo@acme.test';

describe('roles: every app route × owner and member', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let users: DynamoUserStore;
  let keyId: string;
  const signedIn = async (email: string) => {
    const c = new AppClient(svc.url);
    expect((await c.signIn(email, PASSWORD)).status, email).toBe(200);
    return c;
  };

  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true });
    users = new DynamoUserStore(svc.dynamo);
    await addUser(svc.dynamo, OWNER, 'acme', PASSWORD, CHEAP_SCRYPT, 'owner');
    await addUser(svc.dynamo, MEMBER, 'acme', PASSWORD, CHEAP_SCRYPT, 'member');
    keyId = (await new DynamoKeyStore(svc.dynamo).create('acme', 'ci', new Date())).id;
  });
  afterAll(async () => svc.cleanup());

  /** A concrete request for each route: a body that passes validation, for the member (who must get 403 before it acts). */
  const REQUESTS: ReadonlyArray<{ method: string; path: string; body?: unknown }> = [
    { method: 'GET', path: '/api/app/me' },
    { method: 'POST', path: '/api/app/password', body: { current_password: 'wrong', new_password: 'x' } },
    { method: 'GET', path: '/api/app/sites' },
    { method: 'POST', path: '/api/app/sites', body: { domain: 'added-by-member.test', timezone: 'UTC' } },
    { method: 'PATCH', path: `/api/app/sites/${SITE}`, body: { timezone: 'Asia/Tokyo' } },
    { method: 'DELETE', path: `/api/app/sites/${SITE}`, body: { confirm: SITE } },
    { method: 'GET', path: `/api/app/sites/${SITE}/providers` },
    { method: 'GET', path: `/api/app/sites/${SITE}/erasures` },
    { method: 'POST', path: `/api/app/sites/${SITE}/erasures`, body: { kind: 'visitor', id: 'v-1', confirm: SITE } },
    { method: 'PUT', path: `/api/app/sites/${SITE}/providers/paddle`, body: { webhook_secret: 'pdl_ntfset_member' } },
    { method: 'DELETE', path: `/api/app/sites/${SITE}/providers/paddle` },
    { method: 'GET', path: `/api/app/sites/${SITE}/imports/paddle` },
    // An empty key: an owner's request stops at validation, so no import job starts.
    { method: 'POST', path: `/api/app/sites/${SITE}/imports/paddle`, body: { api_key: '' } },
    { method: 'GET', path: `/api/app/sites/${SITE}/shares` },
    { method: 'POST', path: `/api/app/sites/${SITE}/shares`, body: { name: 'member link' } },
    { method: 'DELETE', path: `/api/app/sites/${SITE}/shares/shr_000000000000` },
    { method: 'GET', path: `/api/app/sites/${SITE}/email-reports` },
    {
      method: 'PUT',
      path: `/api/app/sites/${SITE}/email-reports`,
      body: { recipients: [{ email: 'mallory@evil.test', weekly: true, monthly: true }] },
    },
    { method: 'GET', path: '/api/app/keys' },
    { method: 'POST', path: '/api/app/keys', body: { name: 'member key' } },
    { method: 'DELETE', path: '/api/app/keys/KEY' },
    { method: 'GET', path: '/api/app/users' },
    { method: 'POST', path: '/api/app/users', body: { email: 'mallory@acme.test', role: 'owner' } },
    { method: 'PATCH', path: `/api/app/users/${OWNER}`, body: { role: 'member' } },
    { method: 'DELETE', path: `/api/app/users/${OWNER}` },
  ];
  const routeOf = (method: string, path: string) =>
    APP_ROUTE_ACCESS.find((r) => r.method === method && r.pattern.test(path));

  it('every signed-in route has a request here, and every write but one’s own password is for owners', () => {
    const signedInRoutes = APP_ROUTE_ACCESS.filter((r) => r.access !== 'public');
    for (const r of signedInRoutes)
      expect(
        REQUESTS.some((q) => q.method === r.method && r.pattern.test(q.path)),
        `${r.method} ${r.pattern}`,
      ).toBe(true);
    const writes = signedInRoutes.filter((r) => r.method !== 'GET');
    expect(writes.filter((r) => r.access !== 'owner').map((r) => `${r.method} ${r.pattern.source}`)).toEqual([
      'POST ^\\/api\\/app\\/password$',
    ]);
    expect(signedInRoutes.filter((r) => r.method === 'GET').every((r) => r.access === 'user')).toBe(true);
  });

  it('a member gets 403 on every owner route and nothing changes; reads and their own password pass the role check', async () => {
    const member = await signedIn(MEMBER);
    const before = {
      sites: (await member.call('GET', '/api/app/sites')).body,
      keys: (await member.call('GET', '/api/app/keys')).body,
      users: (await member.call('GET', '/api/app/users')).body,
      providers: (await member.call('GET', `/api/app/sites/${SITE}/providers`)).body,
    };
    for (const q of REQUESTS) {
      const path = q.path.replace('KEY', keyId);
      const res = await member.call(q.method, path, q.body);
      const label = `${q.method} ${path}`;
      if (routeOf(q.method, path)?.access === 'owner')
        expect(res, label).toMatchObject({ status: 403, body: { error: OWNERS_ONLY } });
      else expect([401, 403], label).not.toContain(res.status);
    }
    expect((await member.call('GET', '/api/app/sites')).body).toEqual(before.sites);
    expect((await member.call('GET', '/api/app/keys')).body).toEqual(before.keys);
    expect((await member.call('GET', '/api/app/users')).body).toEqual(before.users);
    expect((await member.call('GET', `/api/app/sites/${SITE}/providers`)).body).toEqual(before.providers);
    expect((await member.call('GET', '/api/app/me')).body).toMatchObject({ user: { email: MEMBER, role: 'member' } });
  });

  it('an owner passes the role check on every route (answers from the body or target checks that follow it)', async () => {
    const owner = await signedIn(OWNER);
    for (const q of REQUESTS) {
      // Bodies that fail validation, or targets that do not exist: the answer proves the role check let it through.
      const body = q.body === undefined ? undefined : { not_a_field: true };
      const path = q.path
        .replace('KEY', 'key_000000000000')
        .replace(OWNER, 'ghost@acme.test')
        .replace('/paddle', '/no-such-provider');
      const res = await owner.call(q.method, path, body);
      const label = `${q.method} ${path}`;
      expect([401, 403], label).not.toContain(res.status);
      if (q.method !== 'GET') expect([400, 404], label).toContain(res.status);
    }
  });

  it('the last owner can be neither demoted nor removed; a demoted owner loses the owner routes at their next request', async () => {
    const owner = await signedIn(OWNER);
    expect(await owner.call('PATCH', `/api/app/users/${OWNER}`, { role: 'member' })).toMatchObject({
      status: 409,
      body: { error: expect.stringContaining('last owner'), field: 'role' },
    });
    expect(await owner.call('PATCH', `/api/app/users/${MEMBER}`, { role: 'owner' })).toMatchObject({
      status: 200,
      body: { email: MEMBER, role: 'owner' },
    });
    const milo = await signedIn(MEMBER);
    expect((await milo.call('PATCH', `/api/app/users/${OWNER}`, { role: 'member' })).status).toBe(200);
    expect(await owner.call('POST', '/api/app/keys', { name: 'x' })).toMatchObject({ status: 403 });
    expect(await owner.call('DELETE', `/api/app/users/${MEMBER}`)).toMatchObject({ status: 403 });
    // Milo is now the only owner.
    expect((await milo.call('PATCH', `/api/app/users/${MEMBER}`, { role: 'member' })).status).toBe(409);
    await expect(setUserRole({ users, clock: Date.now }, 'acme', null, MEMBER, 'member')).rejects.toThrow('last owner');
    expect((await milo.call('GET', '/api/app/users')).body).toEqual({
      users: [
        expect.objectContaining({ email: MEMBER, role: 'owner' }),
        expect.objectContaining({ email: OWNER, role: 'member' }),
      ],
    });
    // Back as the test began.
    expect((await milo.call('PATCH', `/api/app/users/${OWNER}`, { role: 'owner' })).status).toBe(200);
    expect((await owner.call('PATCH', `/api/app/users/${MEMBER}`, { role: 'member' })).status).toBe(200);
  });

  it('two owners demoting or removing each other at once leave one owner', async () => {
    const a = 'ada@acme.test';
    const b = 'bea@acme.test';
    await addUser(svc.dynamo, a, 'acme', PASSWORD, CHEAP_SCRYPT, 'owner');
    await addUser(svc.dynamo, b, 'acme', PASSWORD, CHEAP_SCRYPT, 'owner');
    await users.setRole({ email: OWNER, account: 'acme' }, 'member');
    for (const [verb, body] of [
      ['PATCH', { role: 'member' }],
      ['DELETE', undefined],
    ] as const) {
      const [ca, cb] = [await signedIn(a), await signedIn(b)];
      const answers = await Promise.all([
        ca.call(verb, `/api/app/users/${b}`, body),
        cb.call(verb, `/api/app/users/${a}`, body),
      ]);
      const owners = (await users.members('acme')).filter((m) => m.role === 'owner');
      expect(owners.length, `${verb}: ${answers.map((x) => x.status).join(',')}`).toBe(1);
      expect(answers.map((x) => x.status).sort()).toEqual([verb === 'PATCH' ? 200 : 204, expect.any(Number)].sort());
      // Restore both as owners for the next verb.
      for (const email of [a, b]) {
        if (!(await users.get(email))) await addUser(svc.dynamo, email, 'acme', PASSWORD, CHEAP_SCRYPT, 'owner');
        await users.setRole({ email, account: 'acme' }, 'owner');
      }
    }
    for (const email of [a, b]) await users.remove({ email, account: 'acme' });
    await users.setRole({ email: OWNER, account: 'acme' }, 'owner');
  });

  it('a lapsed role lock (its holder crashed) does not block; a held one answers 409', async () => {
    const lock = { [PK]: PARTITIONS.account.key('acme'), [SK]: 'ROLE_LOCK', type: 'ROLE_LOCK', token: 1 };
    const put = (until: number) =>
      svc.dynamo.doc.send(new PutCommand({ TableName: svc.dynamo.table, Item: { ...lock, until } }));
    const owner = await signedIn(OWNER);
    await put(Date.now() + ROLE_LOCK_MS);
    expect(await owner.call('PATCH', `/api/app/users/${MEMBER}`, { role: 'member' })).toMatchObject({ status: 409 });
    await put(Date.now() - 1);
    expect((await owner.call('PATCH', `/api/app/users/${MEMBER}`, { role: 'member' })).status).toBe(200);
  });

  it('users stored before roles (no role attribute) read as owners, in the session and in the list', async () => {
    const email = 'old@acme.test';
    const hash = await hashPassword(PASSWORD, CHEAP_SCRYPT);
    const table = svc.dynamo.table;
    await svc.dynamo.doc.send(
      new PutCommand({
        TableName: table,
        Item: {
          [PK]: PARTITIONS.user.key(email),
          [SK]: 'USER',
          type: 'USER',
          email,
          account: 'acme',
          created: new Date().toISOString(),
          password_hash: hash,
          epoch: 7,
        },
      }),
    );
    await svc.dynamo.doc.send(
      new PutCommand({
        TableName: table,
        Item: {
          [PK]: PARTITIONS.account.key('acme'),
          [SK]: PARTITIONS.user.key(email),
          type: 'MEMBER',
          email,
          created: new Date().toISOString(),
          status: 'active',
        },
      }),
    );
    const old = await signedIn(email);
    expect((await old.call('GET', '/api/app/me')).body).toMatchObject({ user: { role: 'owner' } });
    expect(((await old.call('GET', '/api/app/users')).body as { users: unknown[] }).users).toContainEqual(
      expect.objectContaining({ email, role: 'owner' }),
    );
    expect((await old.call('POST', '/api/app/keys', { name: 'old owner key' })).status).toBe(201);
  });
});
