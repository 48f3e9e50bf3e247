import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretBox, SecretContext } from '../../ports.js';
import { SecretUnreadableError, gcmOpen, gcmSeal, parseSealed, type Sealed } from './sealed.js';

/** Data keys kept per execution environment: a few sites times four providers. */
const DEFAULT_CACHE_ENTRIES = 256;

const kmsContext = (context: SecretContext): Record<string, string> => ({
  site: context.site,
  provider: context.provider,
});

/**
 * Envelope encryption with a customer-managed KMS key (`docs/security.md`):
 * each `seal` asks KMS for a fresh AES-256 data key (`GenerateDataKey`, with
 * the site and provider as encryption context), encrypts with AES-256-GCM
 * locally and keeps only the KMS-encrypted data key beside the ciphertext.
 * `open` has KMS decrypt the data key (`Decrypt`, same context: KMS refuses
 * another) and keeps the plaintext key in a per-container cache keyed by the
 * encrypted key and context, so a warm webhook function calls KMS once per
 * secret. Needs `kms:GenerateDataKey` to seal and `kms:Decrypt` to open.
 */
export class KmsSecretBox implements SecretBox {
  private readonly dataKeys = new Map<string, Buffer>();

  constructor(
    private readonly kms: KMSClient,
    /** Key id or ARN (from `SECRETS_KEY_ID` in the Lambda environment). */
    private readonly keyId: string,
    private readonly cacheEntries = DEFAULT_CACHE_ENTRIES,
  ) {}

  async seal(plaintext: string, context: SecretContext): Promise<string> {
    const { Plaintext, CiphertextBlob } = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: kmsContext(context) }),
    );
    if (!Plaintext || !CiphertextBlob) throw new Error('KMS GenerateDataKey returned no data key');
    const key = Buffer.from(Plaintext);
    try {
      const sealed: Sealed = {
        v: 1,
        kms: Buffer.from(CiphertextBlob).toString('base64'),
        ...gcmSeal(key, plaintext, context),
      };
      return JSON.stringify(sealed);
    } finally {
      key.fill(0);
    }
  }

  /** @throws SecretUnreadableError when KMS refuses the data key (another key or context) or the tag does not verify */
  async open(sealed: string, context: SecretContext): Promise<string> {
    const parsed = parseSealed(sealed);
    if (!('kms' in parsed)) throw new SecretUnreadableError('the secret was not sealed by KMS');
    return gcmOpen(await this.dataKey(parsed.kms, context), parsed, context);
  }

  private async dataKey(encrypted: string, context: SecretContext): Promise<Buffer> {
    const cacheKey = `${encrypted}\n${context.site}\n${context.provider}`;
    const cached = this.dataKeys.get(cacheKey);
    if (cached) return cached;
    let plaintext: Uint8Array | undefined;
    try {
      ({ Plaintext: plaintext } = await this.kms.send(
        new DecryptCommand({
          KeyId: this.keyId,
          CiphertextBlob: Buffer.from(encrypted, 'base64'),
          EncryptionContext: kmsContext(context),
        }),
      ));
    } catch (error) {
      // KMS answers a wrong context or a foreign key with InvalidCiphertextException / IncorrectKeyException.
      const name = (error as Error).name;
      if (name === 'InvalidCiphertextException' || name === 'IncorrectKeyException') {
        throw new SecretUnreadableError(`KMS does not open the data key of ${context.provider} for ${context.site}`, {
          cause: error,
        });
      }
      throw error;
    }
    if (!plaintext) throw new Error('KMS Decrypt returned no plaintext');
    const key = Buffer.from(plaintext);
    if (this.dataKeys.size >= this.cacheEntries) this.dataKeys.delete(this.dataKeys.keys().next().value!);
    this.dataKeys.set(cacheKey, key);
    return key;
  }
}
