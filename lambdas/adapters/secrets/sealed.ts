import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { SecretContext } from '../../ports.js';

/** Thrown when a sealed secret does not open: tampered, sealed by another key, or bound to another site or provider. */
export class SecretUnreadableError extends Error {
  override readonly name = 'SecretUnreadableError';
}

/** AES-256-GCM: 32-byte keys, 12-byte IVs (NIST SP 800-38D's recommended length), 16-byte tags. */
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const b64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/);
/**
 * The sealed format: where the key comes from (`x25519`: the fingerprint of the stack's key pair in
 * Parameter Store, with `epk` the seal's ephemeral public key; `kms`: the KMS-encrypted data key of
 * earlier releases; `local`: the data directory's key file), and the GCM parts, all base64.
 */
export const sealedSchema = z.union([
  z
    .object({ v: z.literal(1), x25519: z.string().regex(/^[0-9a-f]{16}$/), epk: b64, iv: b64, tag: b64, ct: b64 })
    .strict(),
  z.object({ v: z.literal(1), kms: b64, iv: b64, tag: b64, ct: b64 }).strict(),
  z.object({ v: z.literal(1), local: z.literal(true), iv: b64, tag: b64, ct: b64 }).strict(),
]);
export type Sealed = z.infer<typeof sealedSchema>;

/**
 * The context as GCM's additional authenticated data: the same bytes for the
 * same context whatever the key order, so a ciphertext moved to another
 * site's or provider's item fails its tag even when its data key is cached.
 */
export function contextBytes(context: SecretContext): Buffer {
  return Buffer.from(
    JSON.stringify([
      ['provider', context.provider],
      ['site', context.site],
    ]),
    'utf8',
  );
}

/** Encrypts `plaintext` with a 32-byte `key` and a fresh random IV, authenticating `context`. */
export function gcmSeal(
  key: Buffer,
  plaintext: string,
  context: SecretContext,
): { iv: string; tag: string; ct: string } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(contextBytes(context));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
}

/** The plaintext of `gcmSeal`. @throws SecretUnreadableError when the tag does not verify (wrong key, context or bytes) */
export function gcmOpen(key: Buffer, parts: { iv: string; tag: string; ct: string }, context: SecretContext): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts.iv, 'base64'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(contextBytes(context));
    decipher.setAuthTag(Buffer.from(parts.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(parts.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new SecretUnreadableError(`the sealed secret of ${context.provider} for ${context.site} does not open`, {
      cause: error,
    });
  }
}

/** Parses a sealed string. @throws SecretUnreadableError when it is not the sealed format */
export function parseSealed(sealed: string): Sealed {
  let json: unknown;
  try {
    json = JSON.parse(sealed);
  } catch (error) {
    throw new SecretUnreadableError('a sealed secret is not JSON', { cause: error });
  }
  const parsed = sealedSchema.safeParse(json);
  if (!parsed.success) throw new SecretUnreadableError('a sealed secret is not in the sealed format (v 1)');
  return parsed.data;
}

/** Whether `sealed` is sealed under the KMS key of earlier releases (`{kms: …}`), which `footfall secrets reseal` moves. */
export function sealedUnderKms(sealed: string): boolean {
  try {
    return 'kms' in parseSealed(sealed);
  } catch {
    return false;
  }
}
