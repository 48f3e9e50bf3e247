import { createHash, randomBytes } from 'node:crypto';
import * as z from 'zod';
import { PASSWORD_MAX } from './auth/password.js';

/**
 * Shared links (`docs/security.md`, "Shared links"): a read-only link to one
 * site's dashboard, `/share/<domain>#auth=<token>`, optionally behind a
 * password. The token is 256 random bits, shown once and stored only as its
 * SHA-256, like an API key.
 */

/** Recognisable prefix of a shared link's token, so it is never mistaken for an API key (`ff_`). */
export const SHARE_TOKEN_PREFIX = 'ffs_';
/** 32 random bytes, base64url: 43 characters after the prefix. */
const SHARE_TOKEN_SHAPE = /^ffs_[A-Za-z0-9_-]{43}$/;

/** The request header the shared view sends its link's token in (never a URL: no access log or Referer holds it). */
export const SHARE_HEADER = 'x-footfall-share';

/** A password-protected link's unlock lasts a day, then the password is asked again (ms). */
export const SHARE_SESSION_TTL_MS = 86_400_000;

/** A new link token: shown once to the owner who creates the link, never stored. */
export function newShareToken(): string {
  return `${SHARE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** A new link id: public, names the link in settings and in its unlock cookie. */
export function newShareId(): string {
  return `shr_${randomBytes(6).toString('hex')}`;
}

/** The shape of a link id (checked before any lookup). */
export const SHARE_ID_SHAPE = /^shr_[0-9a-f]{12}$/;

/** True when `token` has the shape of a link token (cheap check before any lookup). */
export const looksLikeShareToken = (token: string): boolean => SHARE_TOKEN_SHAPE.test(token);

/** SHA-256 of a token, hex: the only form a link token (or an unlock session's token) is stored in. */
export function hashShareToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** `POST /api/app/sites/{domain}/shares`: a name (unique in the site, as Plausible asks) and an optional password. */
export const createShareBody = z
  .object({
    name: z.string('Give the link a name.').trim().min(1, 'Give the link a name.').max(100, 'At most 100 characters.'),
    password: z
      .string()
      .max(PASSWORD_MAX, `Use at most ${PASSWORD_MAX} characters.`)
      .optional()
      .transform((p) => (p === '' ? undefined : p)),
  })
  .strict();

/** `POST /api/app/shared`: the link's token, and its password when it has one. */
export const openShareBody = z
  .object({
    token: z.string('This shared link is not valid.').max(100),
    password: z.string().max(PASSWORD_MAX, `At most ${PASSWORD_MAX} characters.`).optional(),
  })
  .strict();

/** The name of a link's unlock cookie: one per link, so two protected links of a site do not overwrite each other. */
export const shareCookieName = (id: string) => `ff_share_${id.replace(/^shr_/, '')}`;

/**
 * The `Set-Cookie` of a protected link's unlock (RFC 6265 §4.1): sent only
 * with the site's report requests (`Path=/api/v1/sites/<domain>/`),
 * `HttpOnly`, `SameSite=Strict`, `Max-Age` in seconds; 0 deletes it.
 */
export function shareCookie(id: string, domain: string, token: string, maxAgeS: number, secure: boolean): string {
  return [
    `${shareCookieName(id)}=${token}`,
    `Path=/api/v1/sites/${encodeURIComponent(domain)}/`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeS))}`,
    'HttpOnly',
    ...(secure ? ['Secure'] : []),
    'SameSite=Strict',
  ].join('; ');
}

/** A shared link as stored (`docs/data-model.md`, SHARE_LINK and SHARE_INFO): never its token, only the token's hash. */
export interface ShareLink {
  id: string;
  account: string;
  /** The site's domain. */
  site: string;
  /** The site's `created` when the link was made: a site deleted and added again does not revive its old links. */
  site_created: string;
  name: string;
  /** ISO 8601, UTC. */
  created: string;
  /** scrypt hash of the link's password (`domain/auth/password.ts`), or null for a link without one. */
  password_hash: string | null;
}

/** A protected link's unlock: which link, and when it ends (ms since epoch). */
export interface ShareUnlock {
  link: string;
  expires: number;
}
