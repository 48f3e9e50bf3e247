import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefix of Footfall API keys (`docs/security.md` "API keys"). */
export const KEY_PREFIX = 'ff_';
/** 32 random bytes, base64url: 43 characters after the prefix. */
const KEY_BYTES = 32;

/** A new API key: shown once, never stored (`docs/security.md` "API keys"). */
export function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(KEY_BYTES).toString('base64url')}`;
}

/** A new key id: public, shown by `keys list`, used by `keys revoke`. */
export function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}

/** SHA-256 of the key, hex: the only form a key is stored in (`docs/security.md` "API keys"). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when `key` has the shape of one of our keys (cheap check before any lookup). */
export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX) && /^[A-Za-z0-9_-]{43,128}$/.test(key.slice(KEY_PREFIX.length));
}

/**
 * What an `Authorization` header holds (`docs/security.md` "API keys", RFC 6750 §2.1):
 * - `none`: no header (or an empty one);
 * - `other`: not `Bearer <token>` (another scheme, a bare key, several tokens);
 * - `malformed`: a bearer token that cannot be one of our keys (`Bearer ff_nope`);
 * - `key`: a bearer token with the shape of our keys, still to be looked up.
 */
export type AuthorizationHeader =
  { kind: 'none' } | { kind: 'other' } | { kind: 'malformed'; token: string } | { kind: 'key'; key: string };

export function parseAuthorization(header: string | undefined): AuthorizationHeader {
  if (!header?.trim()) return { kind: 'none' };
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1];
  if (!token) return { kind: 'other' };
  return looksLikeApiKey(token) ? { kind: 'key', key: token } : { kind: 'malformed', token };
}

/** An API key as listed: never the key itself. */
export interface ApiKeyInfo {
  id: string;
  account: string;
  name: string | null;
  created: string;
  last_used: string | null;
  revoked: string | null;
}
