import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import * as z from 'zod';

/**
 * scrypt parameters: OWASP Password Storage Cheat Sheet, "Scrypt": "a minimum
 * CPU/memory cost parameter of (2^17), a minimum block size of 8 (1024 bytes),
 * and a parallelization parameter of 1" (docs/security.md). 128 MiB and about
 * 0.4 s per hash on one core of the dev machine.
 */
export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** Passwords the app accepts: 10 to 256 characters (OWASP ASVS 2.1.1 asks ≥ 8 with no composition rules; 256 bounds the work). */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;
export const passwordSchema = z
  .string()
  .min(PASSWORD_MIN, `Use at least ${PASSWORD_MIN} characters.`)
  .max(PASSWORD_MAX, `Use at most ${PASSWORD_MAX} characters.`);

type Params = { N: number; r: number; p: number };

function derive(password: string, salt: Buffer, params: Params): Promise<Buffer> {
  // maxmem: Node's default (32 MiB) is below 128·N·r; leave room for the 2^17 parameters.
  const options: ScryptOptions = { ...params, maxmem: 256 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * Hashes a password with scrypt and a random 16-byte salt. The result is
 * self-describing, `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<key b64url>`, so
 * stronger parameters later apply to new hashes without breaking old ones.
 */
export async function hashPassword(password: string, params: Params = SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params);
  return [
    'scrypt',
    Math.log2(params.N),
    params.r,
    params.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

const storedSchema = z.tuple([
  z.literal('scrypt'),
  z.coerce.number().int().min(10).max(22),
  z.coerce.number().int().min(1).max(32),
  z.coerce.number().int().min(1).max(16),
  z.string().min(1),
  z.string().min(1),
]);

/**
 * True when `password` matches `stored` (a `hashPassword` result), compared in
 * constant time. A malformed stored hash never matches.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = storedSchema.safeParse(stored.split('$'));
  if (!parsed.success) return false;
  const [, logN, r, p, salt, key] = parsed.data;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: 2 ** logN, r, p });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
