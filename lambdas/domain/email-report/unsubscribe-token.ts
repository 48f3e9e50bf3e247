import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Unsubscribe tokens of email reports (`docs/security.md`, "Email reports"): a link in each mail
 * removes its address from the site's recipients with no sign-in. The token names the site and the
 * address by its `addressId` (the address itself never appears in a URL or a log) and carries an
 * HMAC-SHA256 (RFC 2104) of both under the site's own random key, kept with its recipients.
 * Without the key no token can be made; changing the site or the address breaks the MAC.
 */

/** A recipient's stable id: the first 16 hex digits of SHA-256 of the lowercase address. */
export const addressId = (email: string): string =>
  createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 16);

const mac = (key: Buffer, site: string, id: string) =>
  createHmac('sha256', key).update(`unsubscribe\n${site}\n${id}`).digest();

/** The token of `email` on `site` under the site's key: `<site, base64url>.<addressId>.<MAC, base64url>`. */
export function unsubscribeToken(key: Buffer, site: string, email: string): string {
  const id = addressId(email);
  return `${Buffer.from(site).toString('base64url')}.${id}.${mac(key, site, id).toString('base64url')}`;
}

/** The site and address id a token names, unverified (to find the key), or null when it is not a token's shape. */
export function tokenClaims(token: string): { site: string; id: string; mac: Buffer } | null {
  const m = /^([A-Za-z0-9_-]{1,400})\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  const site = Buffer.from(m[1]!, 'base64url');
  const mac = Buffer.from(m[3]!, 'base64url');
  // Only the canonical spelling: base64url's last character carries unused bits, which decoding ignores.
  if (site.toString('base64url') !== m[1] || mac.toString('base64url') !== m[3]) return null;
  return { site: site.toString(), id: m[2]!, mac };
}

/** Whether `token` was made by `unsubscribeToken` with `key` (compared in constant time). */
export function verifyToken(key: Buffer, token: string): boolean {
  const claims = tokenClaims(token);
  if (!claims) return false;
  const expected = mac(key, claims.site, claims.id);
  return claims.mac.length === expected.length && timingSafeEqual(claims.mac, expected);
}
