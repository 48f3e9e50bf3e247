import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import { hashPassword, verifyPassword } from '../../lambdas/domain/auth/password.js';
import { createInvite, invitePath } from '../../lambdas/services/auth.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';

/** The demo account's user, made by `npm start` (docs/app.md). */
export const DEMO_EMAIL = 'demo@footfall.dev';

/** The demo password is kept in the data directory, like the demo key, so every `npm start` can print it (a local demo only). */
const passwordFile = (dataDir: string) => join(dataDir, 'demo-password');

/** How to sign in as the demo user: the password, or a one-time link when the password was changed in the app. */
export type DemoSignIn = { email: string; password: string } | { email: string; link: string };

/**
 * Makes sure the demo account has its user and says how to sign in: on the
 * first start a user with a random password (kept in `<data>/demo-password`);
 * later the same password while it still works, else (changed in the app) a
 * one-time set-password link on `baseUrl`.
 */
export async function ensureDemoUser(
  dynamo: DynamoConnection,
  dataDir: string,
  account: string,
  baseUrl: string,
): Promise<DemoSignIn> {
  const users = new DynamoUserStore(dynamo);
  const user = await users.get(DEMO_EMAIL);
  if (!user) {
    await users.add(DEMO_EMAIL, account, new Date(), 'owner');
    const password = randomBytes(12).toString('base64url');
    await users.setPassword(DEMO_EMAIL, await hashPassword(password));
    await writeFile(passwordFile(dataDir), `${password}\n`, { mode: 0o600 });
    return { email: DEMO_EMAIL, password };
  }
  const password = await readFile(passwordFile(dataDir), 'utf8').then(
    (p) => p.trim(),
    () => null,
  );
  if (password && user.password_hash && (await verifyPassword(password, user.password_hash)))
    return { email: DEMO_EMAIL, password };
  const token = await createInvite({ users, clock: Date.now }, user);
  return { email: DEMO_EMAIL, link: `${baseUrl}${invitePath(token)}` };
}
