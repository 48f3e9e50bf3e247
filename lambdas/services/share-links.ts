import * as z from 'zod';
import { FieldError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { addressGroup, attemptKey } from '../domain/auth/attempts.js';
import { hashPassword, passwordSchema, verifyPassword } from '../domain/auth/password.js';
import { hashToken, looksLikeToken, newToken } from '../domain/auth/token.js';
import {
  SHARE_ID_SHAPE,
  SHARE_SESSION_TTL_MS,
  hashShareToken,
  looksLikeShareToken,
  newShareId,
  newShareToken,
  type openShareBody,
} from '../domain/share-link.js';
import type { SiteConfig } from '../domain/site.js';
import type { ShareLink, ShareUnlock } from '../domain/share-link.js';
import { admitAttempt, type AuthDeps } from './auth.js';

/** What shared links need: their store, the sites, and (to unlock a protected link) the attempt counters and the KDF. */
export interface ShareDeps {
  links: {
    create(hash: string, link: ShareLink): Promise<void>;
    list(site: string): Promise<ShareLink[]>;
    byHash(hash: string): Promise<ShareLink | null>;
    revoke(site: string, id: string): Promise<boolean>;
    addUnlock(hash: string, unlock: ShareUnlock): Promise<void>;
    getUnlock(hash: string): Promise<ShareUnlock | null>;
  };
  sites: { getSite(domain: string): Promise<SiteConfig | null> };
  clock: () => number;
}

/** What opening a link needs besides: the sign-in attempt counters and the KDF (`AuthDeps.passwords`). */
export type OpenShareDeps = ShareDeps & Pick<AuthDeps, 'attempts' | 'passwords'>;

/** A link as settings list it: never its token or password. */
export interface ShareView {
  id: string;
  name: string;
  created: string;
  has_password: boolean;
}

/** What a shared view is told about its link: the site (domain and timezone), the link's name, whether it is unlocked. */
export interface OpenedShare {
  site: { domain: string; timezone: string };
  name: string;
  password_required: boolean;
  /** True when the reports may be read: no password, or the right one was just given. */
  unlocked: boolean;
}

const NO_LINK = 'This shared link does not exist or was revoked.';
const TOO_MANY = 'Too many password attempts for this link. Wait a few minutes and try again.';

const view = (l: ShareLink): ShareView => ({
  id: l.id,
  name: l.name,
  created: l.created,
  has_password: l.password_hash !== null,
});

/** The path of a link's shared view (`docs/app.md`): the token in the fragment, which no request carries. */
export const sharePath = (domain: string, token: string) => `/share/${encodeURIComponent(domain)}#auth=${token}`;

/** The site of `domain` if `account` owns it; another account's site is as unknown as none (404). */
async function accountSite(deps: Pick<ShareDeps, 'sites'>, account: string, domain: string): Promise<SiteConfig> {
  const site = await deps.sites.getSite(domain.toLowerCase());
  if (!site || site.account !== account) throw new NotFoundError(`no site ${domain}`);
  return site;
}

/**
 * The link of a token if it still opens its site: known, not revoked, and
 * its site still the account's and the same site (not deleted and added
 * again). Null otherwise.
 */
async function liveLink(deps: ShareDeps, token: string): Promise<{ link: ShareLink; site: SiteConfig } | null> {
  if (!looksLikeShareToken(token)) return null;
  const link = await deps.links.byHash(hashShareToken(token));
  if (!link) return null;
  const site = await deps.sites.getSite(link.site);
  if (!site || site.account !== link.account || site.created !== link.site_created) return null;
  return { link, site };
}

/** The site's links, newest first. @throws NotFoundError (404) for a site not the account's */
export async function listShareLinks(
  deps: ShareDeps,
  account: string,
  domain: string,
): Promise<{ links: ShareView[] }> {
  const site = await accountSite(deps, account, domain);
  // Links of an earlier site of the same domain (deleted, then added again) open nothing: not listed.
  const links = (await deps.links.list(site.domain)).filter(
    (l) => l.account === account && l.site_created === site.created,
  );
  // Newest first; links made in the same millisecond by name, so the list does not follow their random ids.
  links.sort((a, b) => b.created.localeCompare(a.created) || a.name.localeCompare(b.name));
  return { links: links.map(view) };
}

/**
 * Creates a shared link of a site: a 256-bit token, stored as its SHA-256;
 * a password, if given, hashed with the users' KDF (scrypt). The answer is
 * the only time the token (and so the link's path) exists in clear.
 * @throws NotFoundError (404) for a site not the account's; FieldError (400) for a name the site has already or an unusable password
 */
export async function createShareLink(
  deps: ShareDeps & Pick<AuthDeps, 'passwords'>,
  account: string,
  domain: string,
  body: { name: string; password?: string | undefined },
): Promise<ShareView & { path: string }> {
  const site = await accountSite(deps, account, domain);
  if ((await deps.links.list(site.domain)).some((l) => l.name.toLowerCase() === body.name.toLowerCase()))
    throw new FieldError('name', 'This site has a link with that name already.');
  let password_hash: string | null = null;
  if (body.password !== undefined) {
    const parsed = passwordSchema.safeParse(body.password);
    if (!parsed.success) throw new FieldError('password', parsed.error.issues[0]?.message ?? 'not a valid password');
    password_hash = await (deps.passwords?.hash ?? hashPassword)(parsed.data);
  }
  const token = newShareToken();
  const link: ShareLink = {
    id: newShareId(),
    account,
    site: site.domain,
    site_created: site.created,
    name: body.name,
    created: new Date(deps.clock()).toISOString(),
    password_hash,
  };
  await deps.links.create(hashShareToken(token), link);
  return { ...view(link), path: sharePath(site.domain, token) };
}

/** Deletes a site's link; its next request is refused. @throws NotFoundError (404) for an unknown link or a site not the account's */
export async function revokeShareLink(deps: ShareDeps, account: string, domain: string, id: string): Promise<void> {
  const site = await accountSite(deps, account, domain);
  const link = SHARE_ID_SHAPE.test(id) ? (await deps.links.list(site.domain)).find((l) => l.id === id) : undefined;
  if (!link || link.account !== account || !(await deps.links.revoke(site.domain, id)))
    throw new NotFoundError(`no shared link ${id}`);
}

/**
 * Opens a shared link (`POST /api/app/shared`): what the shared view shows
 * before its reports. A protected link with its password counts the attempt
 * first, per (link, address group), per link and per address group, as
 * sign-in does (429 past a limit, `docs/security.md`), and unlocks it for
 * `SHARE_SESSION_TTL_MS` with a new 256-bit token (stored as its hash) for
 * the link's cookie.
 * @throws NotFoundError (404) unknown or revoked; FieldError (400) wrong password; TooManyRequestsError (429)
 */
export async function openShareLink(
  deps: OpenShareDeps,
  body: z.output<typeof openShareBody>,
  address: string,
): Promise<{ opened: OpenedShare; unlock?: { id: string; token: string; expires: number } }> {
  const live = await liveLink(deps, body.token);
  if (!live) throw new NotFoundError(NO_LINK);
  const { link, site } = live;
  const opened = (unlocked: boolean): OpenedShare => ({
    site: { domain: site.domain, timezone: site.timezone },
    name: link.name,
    password_required: link.password_hash !== null,
    unlocked,
  });
  if (link.password_hash === null) return { opened: opened(true) };
  if (body.password === undefined) return { opened: opened(false) };
  const now = deps.clock();
  const group = addressGroup(address);
  const pair = `${link.id} ${group}`;
  await admitAttempt(
    deps,
    [
      ['pair', pair],
      ['link', link.id],
      ['address', group],
    ],
    now,
    TOO_MANY,
  );
  if (!(await (deps.passwords?.verify ?? verifyPassword)(body.password, link.password_hash)))
    throw new FieldError('password', 'Wrong password.');
  await deps.attempts.clear(attemptKey('pair', pair));
  const token = newToken();
  const expires = now + SHARE_SESSION_TTL_MS;
  await deps.links.addUnlock(hashToken(token), { link: link.id, expires });
  return { opened: opened(true), unlock: { id: link.id, token, expires } };
}

/**
 * The account and site a shared view's report request may read: the link of
 * `token` (header `x-footfall-share`), and for a protected link an unexpired
 * unlock of that link in its cookie (`unlockOf(link id)` gives the cookie's
 * value). Two or three strongly consistent reads, so a revocation takes
 * effect on the next request.
 * @throws UnauthorizedError (401) unknown, revoked or still locked
 */
export async function shareAccess(
  deps: ShareDeps,
  token: string,
  unlockOf: (id: string) => string | null,
): Promise<{ account: string; site: string }> {
  const live = await liveLink(deps, token);
  if (!live) throw new UnauthorizedError(`the shared link is not valid (unknown or revoked)`);
  const { link } = live;
  if (link.password_hash !== null) {
    const cookie = unlockOf(link.id);
    const unlock = cookie && looksLikeToken(cookie) ? await deps.links.getUnlock(hashToken(cookie)) : null;
    if (!unlock || unlock.link !== link.id || unlock.expires <= deps.clock())
      throw new UnauthorizedError('the shared link needs its password');
  }
  return { account: link.account, site: link.site };
}
