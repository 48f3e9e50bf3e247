import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretBox, SecretContext } from '../../ports.js';
import { KEY_BYTES, SecretUnreadableError, gcmOpen, gcmSeal, parseSealed, type Sealed } from './sealed.js';

/** The key file in the data directory. */
export const LOCAL_SECRET_KEY_FILE = 'secrets.key';

/**
 * The laptop's stand-in for KMS (`docs/security.md`): AES-256-GCM with one
 * random 32-byte key kept in `<dataDir>/secrets.key` (mode 0600 in the 0700
 * data directory), created on first use. Same sealed format as KMS, with
 * `local: true` in place of the encrypted data key.
 */
export class LocalSecretBox implements SecretBox {
  private constructor(private readonly key: Buffer) {}

  /**
   * Opens the data directory's key, creating it when there is none: written
   * whole to a temporary file, then linked into place (which fails when the
   * file exists), so two processes starting at once end with the same key and
   * neither reads a half-written one.
   * @throws Error when the file exists and is not a 32-byte key
   */
  static async open(dataDir: string): Promise<LocalSecretBox> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, LOCAL_SECRET_KEY_FILE);
    const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
    await writeFile(temporary, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
    try {
      await link(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await rm(temporary, { force: true });
    }
    await chmod(file, 0o600);
    const key = await readFile(file);
    if (key.length !== KEY_BYTES) throw new Error(`${file}: not a ${KEY_BYTES}-byte key (${key.length} bytes)`);
    return new LocalSecretBox(key);
  }

  seal(plaintext: string, context: SecretContext): Promise<string> {
    const sealed: Sealed = { v: 1, local: true, ...gcmSeal(this.key, plaintext, context) };
    return Promise.resolve(JSON.stringify(sealed));
  }

  /** @throws SecretUnreadableError when tampered, sealed by another data directory's key or KMS, or bound to another context */
  async open(sealed: string, context: SecretContext): Promise<string> {
    const parsed = parseSealed(sealed);
    if (!('local' in parsed)) throw new SecretUnreadableError('the secret was sealed with KMS, not the local key file');
    return Promise.resolve(gcmOpen(this.key, parsed, context));
  }
}
