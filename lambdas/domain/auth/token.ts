import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes (256 bits, OWASP Session Management: at least 64 bits of entropy), base64url: 43 characters. */
const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A new session or invitation token: given to the browser (or in a link) once, stored only as its hash. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** True when `token` has the shape of one of ours (cheap check before any lookup). */
export function looksLikeToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** SHA-256 of a token, hex: the only form it is stored in, so a table dump holds no usable session. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
