import { createHash, randomBytes } from 'node:crypto';

/** Visitor id `v`: 8 to 64 letters, digits or dashes (`docs/ingestion.md` "The event's fields", "Request"). */
const VISITOR_ID = /^[A-Za-z0-9-]{8,64}$/;

/**
 * Prefix of a daily-hash visitor id. Hash ids are `h-` + 32 lowercase hex
 * digits (128 bits of SHA-256): letters, digits and a dash, so a hash id is
 * itself a valid visitor id and every id-taking path (timelines, `footfall`
 * commands) accepts it unchanged. base64url was not used because its `_` is
 * outside the visitor id's alphabet (letters, digits, dashes). The prefix tells the two kinds apart at a
 * glance and keeps honest tracker ids from ever equalling a hash, provided the
 * tracker never issues an id starting with `h-`. A client can still send any
 * valid `v`, `h-…` included; such an event is recorded with `visitor_kind`
 * `id`, which stays the authoritative marker, and forging a given hash needs
 * that day's secret salt.
 */
export const HASH_PREFIX = 'h-';

/** Hex digits kept from the SHA-256 digest: 32 hex = 128 bits. */
const HASH_HEX_DIGITS = 32;

/** True when `v` is a usable visitor id from the tracker (`docs/ingestion.md` "The event's fields", "Request"). */
export function isValidVisitorId(v: unknown): v is string {
  return typeof v === 'string' && VISITOR_ID.test(v);
}

/**
 * The UTC day, `YYYY-MM-DD`, whose salt hashes an event at `nowMs` (ms since
 * the epoch). The salt rotates at 00:00 UTC, so a visitor without an id
 * becomes a new visitor at midnight UTC (`docs/security.md` "What is stored about a visitor").
 */
export function saltDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** A new daily salt: 32 random bytes, base64url (43 characters). */
export function newSalt(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Daily-hash visitor id: SHA-256 of salt ‖ site ‖ IP ‖ User-Agent (`docs/security.md`
 * "What is stored about a visitor"), returned as `h-` + 32 hex (see `HASH_PREFIX`). Each part is
 * framed as a netstring (`<utf-8 byte length>:<bytes>,`) so no choice of values
 * can shift bytes from one part into the next: ("a.com", "1.2.3.4") and
 * ("a.com1", ".2.3.4") hash differently. The raw IP is never stored, only
 * this hash, and the salt is deleted once its day is over.
 */
export function hashVisitor(input: { salt: string; site: string; ip: string; userAgent: string }): string {
  const hash = createHash('sha256');
  for (const part of [input.salt, input.site, input.ip, input.userAgent]) {
    hash
      .update(`${Buffer.byteLength(part, 'utf8')}:`)
      .update(part, 'utf8')
      .update(',');
  }
  return HASH_PREFIX + hash.digest('hex').slice(0, HASH_HEX_DIGITS);
}

export type VisitorKind = 'id' | 'hash';

/**
 * The event's visitor: the tracker's `v` when it is valid (kind `id`),
 * otherwise the daily hash of the request (kind `hash`); `docs/ingestion.md` "The event's fields" `v`.
 * `salt` is the salt of `saltDay(event time)`.
 */
export function resolveVisitor(input: { v: unknown; salt: string; site: string; ip: string; userAgent: string }): {
  visitor_id: string;
  visitor_kind: VisitorKind;
} {
  if (isValidVisitorId(input.v)) return { visitor_id: input.v, visitor_kind: 'id' };
  return { visitor_id: hashVisitor(input), visitor_kind: 'hash' };
}
