import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import { SCRYPT_PARAMS, hashPassword } from '../../lambdas/domain/auth/password.js';
import type { Role } from '../../lambdas/domain/auth/role.js';

/** scrypt parameters far below OWASP's, for test users whose sign-ins are not about the KDF (the hash records its parameters). */
export const CHEAP_SCRYPT = { N: 2 ** 10, r: 8, p: 1 };

/** Adds a user with a password to an account (what `footfall users add` and the link do); real scrypt parameters unless `params` says otherwise; an owner unless `role` says otherwise. */
export async function addUser(
  dynamo: DynamoConnection,
  email: string,
  account: string,
  password: string,
  params: { N: number; r: number; p: number } = SCRYPT_PARAMS,
  role: Role = 'owner',
): Promise<void> {
  const users = new DynamoUserStore(dynamo);
  await users.add(email, account, new Date(), role);
  await users.setPassword(email, await hashPassword(password, params));
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/**
 * A same-origin client of the app's endpoints, as the browser is: it sends
 * `Origin` on writes and keeps the `ff_session` cookie it is given.
 */
export class AppClient {
  cookie: string | null = null;

  constructor(readonly base: string) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(method === 'GET' ? {} : { origin: this.base }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.cookie ? { cookie: `ff_session=${this.cookie}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('ff_session='));
    if (set) this.cookie = /^ff_session=([^;]*)/.exec(set)?.[1] || null;
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  signIn(email: string, password: string): Promise<Answer> {
    return this.call('POST', '/api/app/sign-in', { email, password });
  }
}
