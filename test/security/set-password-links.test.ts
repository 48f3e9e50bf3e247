import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import { createInvite } from '../../lambdas/services/auth.js';
import { hashToken } from '../../lambdas/domain/auth/token.js';
import { hashPassword } from '../../lambdas/domain/auth/password.js';
import { scenarioService } from '../reports/scenario.js';
import { AppClient, CHEAP_SCRYPT } from '../support/app-client.js';

/**
 * A set-password link carries the user's credential epoch: any password set
 * (by another link, in the app, by the CLI) kills every link made before, and
 * deletes them.
 */
describe('set-password links die with the password they were meant to set', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  let users: DynamoUserStore;
  beforeAll(async () => {
    s = await scenarioService();
    users = new DynamoUserStore(s.svc.dynamo);
  });
  afterAll(async () => s.svc.cleanup());

  /** What `footfall users add` / `users link` do: a user (when new) and a fresh link. */
  const link = async (email: string) => {
    const user = (await users.get(email)) ?? (await users.add(email, 'acme', new Date(), 'owner'));
    return createInvite({ users, clock: Date.now }, user);
  };
  const linkItems = async (email: string) =>
    (
      await s.svc.dynamo.doc.send(
        new QueryCommand({
          TableName: s.svc.dynamo.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': `USER#${email}`, ':p': 'LINK#' },
        }),
      )
    ).Items ?? [];

  it('users add, users link, the first link used, the password changed in the app: the second link is dead', async () => {
    const email = 'lin@acme.test';
    const first = await link(email);
    const second = await link(email);
    expect(await linkItems(email)).toHaveLength(2);
    const lin = new AppClient(s.svc.url);
    expect((await lin.call('POST', `/api/app/invites/${first}`, { password: 'lin-password-1' })).status).toBe(200);
    // Using one link deletes the user's other links too.
    expect(await linkItems(email)).toHaveLength(0);
    expect(await users.getInvite(hashToken(second))).toBeNull();
    const change = await lin.call('POST', '/api/app/password', {
      current_password: 'lin-password-1',
      new_password: 'lin-password-2',
    });
    expect(change.status).toBe(204);
    const thief = new AppClient(s.svc.url);
    expect((await thief.call('GET', `/api/app/invites/${second}`)).status).toBe(404);
    expect((await thief.call('POST', `/api/app/invites/${second}`, { password: 'thief-password' })).status).toBe(404);
    // The user's session survives, and the password is the one they chose.
    expect((await lin.call('GET', '/api/app/me')).status).toBe(200);
    expect((await new AppClient(s.svc.url).signIn(email, 'lin-password-2')).status).toBe(200);
  });

  it.each([
    ['a password change in the app', 'app'],
    ['a password set by the CLI (or any other path that moves the epoch)', 'store'],
  ] as const)(
    'a link whose item survived is still refused after %s',
    async (_case, how) => {
      const email = `kit-${how}@acme.test`;
      await users.add(email, 'acme', new Date(), 'owner');
      await users.setPassword(email, await hashPassword('kit-password-1', CHEAP_SCRYPT));
      // A link made now, then the item restored as if the deletion had been lost: only its epoch can stop it.
      const token = await link(email);
      const stored = await users.getInvite(hashToken(token));
      if (how === 'app') {
        const kit = new AppClient(s.svc.url);
        expect((await kit.signIn(email, 'kit-password-1')).status).toBe(200);
        expect(
          (
            await kit.call('POST', '/api/app/password', {
              current_password: 'kit-password-1',
              new_password: 'kit-password-2',
            })
          ).status,
        ).toBe(204);
      } else {
        await users.setPassword(email, await hashPassword('kit-password-2', CHEAP_SCRYPT));
      }
      expect(await users.getInvite(hashToken(token))).toBeNull();
      await users.addInvite(hashToken(token), stored!);
      const thief = new AppClient(s.svc.url);
      expect((await thief.call('GET', `/api/app/invites/${token}`)).status).toBe(404);
      expect((await thief.call('POST', `/api/app/invites/${token}`, { password: 'thief-password' })).status).toBe(404);
    },
    60_000,
  );
});
