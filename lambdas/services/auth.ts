import { FieldError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../domain/errors.js';
import {
  addressGroup,
  attemptKey,
  attemptsIn,
  bucketStart,
  countedFrom,
  overLimit,
  retryAfterSeconds,
  type AttemptBucket,
  type AttemptScope,
} from '../domain/auth/attempts.js';
import { hashPassword, passwordSchema, verifyPassword } from '../domain/auth/password.js';
import { hashToken, looksLikeToken, newToken } from '../domain/auth/token.js';
import { SESSION_TTL_MS } from '../domain/auth/cookie.js';
import type { Invite, Member, Session, User } from '../domain/auth/accounts.js';

/** How long a one-time link (invitation, CLI set-password link) works: 7 days. */
export const INVITE_TTL_MS = 7 * 86_400_000;

/** What sign-in and sessions need: users, sessions and attempt counters (DynamoDB in AWS and locally). */
export interface AuthDeps {
  users: {
    get(email: string): Promise<User | null>;
    setPassword(email: string, hash: string, expectEpoch?: number): Promise<number | null>;
    addInvite(hash: string, invite: Invite): Promise<void>;
    getInvite(hash: string): Promise<Invite | null>;
    takeInvite(hash: string): Promise<Invite | null>;
    members(account: string): Promise<Member[]>;
  };
  sessions: {
    create(hash: string, s: Session): Promise<void>;
    get(hash: string): Promise<Session | null>;
    delete(hash: string): Promise<void>;
  };
  attempts: {
    add(key: string, start: number, delta: number): Promise<void>;
    buckets(key: string, from: number): Promise<AttemptBucket[]>;
    clear(key: string): Promise<void>;
  };
  clock: () => number;
  /** The KDF (`hashPassword`, `verifyPassword` by default); tests count its calls. */
  passwords?: { hash(password: string): Promise<string>; verify(password: string, stored: string): Promise<boolean> };
}

const KDF = { hash: (p: string) => hashPassword(p), verify: verifyPassword };

/** A request's signed-in user: the session (by the hash of its token) and the user it belongs to. */
export interface SignedIn {
  user: User;
  session: Session;
  sessionHash: string;
}

/** A new session's token, for the cookie, and when it ends (ms). */
export interface NewSession {
  token: string;
  expires: number;
}

/** Emails are compared trimmed and lowercase (the local part is case-insensitive in practice, RFC 5321 §2.4 notwithstanding). */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const WRONG = 'Wrong email or password.';

// A hash to check passwords against when the email is unknown (or has no password yet), so
// that answer takes as long as a wrong password (OWASP Authentication Cheat Sheet).
let decoy: Promise<string> | undefined;
const decoyHash = () => (decoy ??= hashPassword(`decoy-${Math.random()}`));

/**
 * Counts one attempt in each of `counters` (scope, value) before the password
 * is checked; when any is over its limit, takes the attempt back from all of
 * them and refuses it with `refusal`.
 * @throws TooManyRequestsError (429) with the seconds until an attempt would be admitted
 */
export async function admitAttempt(
  deps: Pick<AuthDeps, 'attempts'>,
  counters: ReadonlyArray<[AttemptScope, string]>,
  now: number,
  refusal = 'Too many sign-in attempts. Wait a few minutes and try again.',
): Promise<void> {
  const keys = counters.map(([scope, value]) => attemptKey(scope, value));
  const start = bucketStart(now);
  await Promise.all(keys.map((k) => deps.attempts.add(k, start, 1)));
  const seen = await Promise.all(keys.map((k) => deps.attempts.buckets(k, countedFrom(now))));
  const over = counters.flatMap(([scope], i) =>
    overLimit(scope, attemptsIn(seen[i]!, now)) ? [retryAfterSeconds(scope, seen[i]!, now)] : [],
  );
  if (over.length === 0) return;
  await Promise.all(keys.map((k) => deps.attempts.add(k, start, -1)));
  throw new TooManyRequestsError(refusal, Math.max(...over));
}

/** The address group of password changes (they come from a signed-in session, not an address). */
const PASSWORD_CHANGE = 'password-change';

/** A successful sign-in resets the email's counters (OWASP: the failed-login counter belongs to the account). */
async function resetAttempts(deps: AuthDeps, email: string, group: string | null): Promise<void> {
  const scopes: Array<[AttemptScope, string]> = [['email', email]];
  if (group !== null) scopes.push(['pair', `${email} ${group}`]);
  await Promise.all(scopes.map(([scope, value]) => deps.attempts.clear(attemptKey(scope, value))));
}

/** Starts a session for a user: a new 256-bit token, stored as its hash, ending `SESSION_TTL_MS` from now. */
export async function startSession(
  deps: Pick<AuthDeps, 'sessions' | 'clock'>,
  user: Pick<User, 'email' | 'account' | 'epoch'>,
): Promise<NewSession> {
  const token = newToken();
  const now = deps.clock();
  const expires = now + SESSION_TTL_MS;
  await deps.sessions.create(hashToken(token), {
    email: user.email,
    account: user.account,
    created: now,
    expires,
    epoch: user.epoch,
  });
  return { token, expires };
}

/**
 * Signs in with email and password. Each attempt is counted first per
 * (email, address group), per email and per address group
 * (`domain/auth/attempts.ts`; 429 past a limit); an unknown email, a user
 * without a password yet and a wrong password get the same 401 after the
 * same scrypt work. Success resets the email's counters.
 * @throws TooManyRequestsError (429), UnauthorizedError (401)
 */
export async function signIn(
  deps: AuthDeps,
  input: { email: string; password: string },
  address: string,
): Promise<{ user: User; session: NewSession }> {
  const email = normalizeEmail(input.email);
  const now = deps.clock();
  const group = addressGroup(address);
  await admitAttempt(
    deps,
    [
      ['pair', `${email} ${group}`],
      ['email', email],
      ['address', group],
    ],
    now,
  );
  const user = await deps.users.get(email);
  const hash = user?.password_hash ?? (await decoyHash());
  const ok = await (deps.passwords ?? KDF).verify(input.password, hash);
  if (!ok || !user?.password_hash) throw new UnauthorizedError(WRONG);
  await resetAttempts(deps, email, group);
  return { user, session: await startSession(deps, user) };
}

/**
 * The signed-in user of a session token, or null when the token is malformed,
 * unknown, signed out, expired, or older than the user's last password change
 * or its user was removed. Two strongly consistent reads, so each of those
 * takes effect on the next request.
 */
export async function sessionOf(
  deps: Pick<AuthDeps, 'users' | 'sessions' | 'clock'>,
  token: string | null,
): Promise<SignedIn | null> {
  if (!token || !looksLikeToken(token)) return null;
  const sessionHash = hashToken(token);
  const session = await deps.sessions.get(sessionHash);
  if (!session || session.expires <= deps.clock()) return null;
  const user = await deps.users.get(session.email);
  if (!user || user.account !== session.account || session.epoch !== user.epoch) return null;
  return { user, session, sessionHash };
}

/** Ends the session: its token fails from the next request on. */
export async function signOut(deps: Pick<AuthDeps, 'sessions'>, signedIn: SignedIn): Promise<void> {
  await deps.sessions.delete(signedIn.sessionHash);
}

/** Validates a new password; a bad one is a 400 naming `field`. */
export function newPassword(field: string, password: unknown): string {
  const parsed = passwordSchema.safeParse(password);
  if (!parsed.success) throw new FieldError(field, parsed.error.issues[0]?.message ?? 'not a valid password');
  return parsed.data;
}

/**
 * Changes the signed-in user's password: the current one must match (attempts
 * counted like sign-ins); every session of the user ends, and a new one is
 * started for this browser.
 * @throws FieldError (400) for a wrong current or unusable new password, TooManyRequestsError (429)
 */
export async function changePassword(
  deps: AuthDeps,
  signedIn: SignedIn,
  input: { current_password: string; new_password: string },
): Promise<NewSession> {
  const next = newPassword('new_password', input.new_password);
  const now = deps.clock();
  // The password-change form is its own group: a stolen session gets the pair's limit, not the email's.
  await admitAttempt(
    deps,
    [
      ['pair', `${signedIn.user.email} ${PASSWORD_CHANGE}`],
      ['email', signedIn.user.email],
    ],
    now,
  );
  const kdf = deps.passwords ?? KDF;
  if (!signedIn.user.password_hash || !(await kdf.verify(input.current_password, signedIn.user.password_hash))) {
    throw new FieldError('current_password', 'The current password is wrong.');
  }
  const epoch = await deps.users.setPassword(signedIn.user.email, await kdf.hash(next));
  if (epoch === null) throw new UnauthorizedError('sign in first');
  await resetAttempts(deps, signedIn.user.email, PASSWORD_CHANGE);
  return startSession(deps, { ...signedIn.user, epoch });
}

/**
 * Makes a one-time link for a user to set a password (and so join the
 * account): resolves with the token for the URL. The link carries the user's
 * credential epoch and dies when it changes (any password set, by a link or
 * in the app), as well as when used or after `INVITE_TTL_MS`.
 */
export async function createInvite(
  deps: Pick<AuthDeps, 'users' | 'clock'>,
  user: Pick<User, 'email' | 'account' | 'epoch'>,
): Promise<string> {
  const token = newToken();
  const now = deps.clock();
  await deps.users.addInvite(hashToken(token), {
    email: user.email,
    account: user.account,
    created: now,
    expires: now + INVITE_TTL_MS,
    epoch: user.epoch,
  });
  return token;
}

/** The app's path of a one-time link (`/invite/<token>`, the app's route). */
export const invitePath = (token: string) => `/invite/${token}`;

const EXPIRED = 'This link has expired or was already used.';

/** True while a link can still be used: not expired, and its user still in its account at the epoch it was made at. */
const linkAlive = (invite: Invite, user: User | null, now: number) =>
  invite.expires > now && user !== null && user.account === invite.account && user.epoch === invite.epoch;

/** What a one-time link is for, without using it. @throws NotFoundError when unknown, used, expired or outlived by a password change */
export async function inviteInfo(deps: Pick<AuthDeps, 'users' | 'clock'>, token: string): Promise<Invite> {
  const invite = looksLikeToken(token) ? await deps.users.getInvite(hashToken(token)) : null;
  if (!invite || !linkAlive(invite, await deps.users.get(invite.email), deps.clock())) throw new NotFoundError(EXPIRED);
  return invite;
}

/**
 * Uses a one-time link: sets the user's password (ending any older session)
 * and signs them in. The password is checked before the link is used up.
 * @throws FieldError (400) for an unusable password, NotFoundError (404) for an unknown, used or expired link
 */
export async function acceptInvite(
  deps: AuthDeps,
  token: string,
  password: unknown,
): Promise<{ user: User; session: NewSession }> {
  const next = newPassword('password', password);
  await inviteInfo(deps, token);
  const hash = await (deps.passwords ?? KDF).hash(next);
  const invite = await deps.users.takeInvite(hashToken(token));
  const user = invite ? await deps.users.get(invite.email) : null;
  if (!invite || !user || !linkAlive(invite, user, deps.clock())) throw new NotFoundError(EXPIRED);
  // Conditional on the link's epoch: a password set since the read above still kills the link.
  const epoch = await deps.users.setPassword(user.email, hash, invite.epoch);
  if (epoch === null) throw new NotFoundError(EXPIRED);
  // The set-password link is the way back in while the email is limited (OWASP, "Account Lockout").
  await resetAttempts(deps, user.email, null);
  return { user: { ...user, password_hash: hash, epoch }, session: await startSession(deps, { ...user, epoch }) };
}
