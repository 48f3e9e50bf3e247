import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefix of Footfall API keys (DESIGN.md "API keys"). */
export const KEY_PREFIX = 'ff_';
/** 32 random bytes, base64url: 43 characters after the prefix. */
const KEY_BYTES = 32;

/** A new API key: shown once, never stored (spec §5). */
export function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(KEY_BYTES).toString('base64url')}`;
}

/** A new key id: public, shown by `keys list`, used by `keys revoke`. */
export function newKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}

/** SHA-256 of the key, hex: the only form a key is stored in (spec §5). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when `key` has the shape of one of our keys (cheap check before any lookup). */
export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX) && /^[A-Za-z0-9_-]{43,128}$/.test(key.slice(KEY_PREFIX.length));
}

/**
 * The key of an `Authorization: Bearer <key>` header (spec §5), or null for a
 * missing header, another scheme, or a value that is not one of our keys.
 */
export function bearerKey(header: string | undefined): string | null {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  const key = match?.[1];
  return key && looksLikeApiKey(key) ? key : null;
}
