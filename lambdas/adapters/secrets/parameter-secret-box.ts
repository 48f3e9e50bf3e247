import {
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
} from 'node:crypto';
import { GetParameterCommand, PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { SecretBox, SecretContext } from '../../ports.js';
import { secretsParameterNames } from './parameter-name.js';
import { KEY_BYTES, SecretUnreadableError, gcmOpen, gcmSeal, parseSealed, type Sealed } from './sealed.js';

/** Opens secrets sealed before the stack's key moved to Parameter Store (`KmsSecretBox`), while they are re-sealed. */
export interface LegacyOpener {
  open(sealed: string, context: SecretContext): Promise<string>;
}

/** The HKDF-SHA256 label of the sealing key, so the shared secret serves nothing else. */
const HKDF_INFO = Buffer.from('footfall webhook secret v1', 'utf8');

/** 16 hex digits of SHA-256 over a public key's DER: names its private key's parameter. */
const fingerprintOf = (publicKey: KeyObject): string =>
  createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);

/** The AES-256 key of one sealed secret: HKDF-SHA256 (RFC 5869) over the X25519 shared secret (RFC 7748), salted with the ephemeral public key. */
function sealingKey(privateKey: KeyObject, publicKey: KeyObject, ephemeral: Buffer): Buffer {
  const shared = diffieHellman({ privateKey, publicKey });
  return Buffer.from(hkdfSync('sha256', shared, ephemeral, HKDF_INFO, KEY_BYTES));
}

const publicFromDer = (der: Buffer): KeyObject => createPublicKey({ key: der, format: 'der', type: 'spki' });

/**
 * Webhook secrets sealed to the stack's X25519 key pair in Parameter Store (`docs/security.md`): no
 * KMS key of our own (the AWS managed `aws/ssm` key encrypts the private key, at no monthly fee), and
 * the isolation the KMS key gave kept by IAM on the parameters. Sealing needs only the public key
 * (the app function: `ssm:GetParameter` on it); opening needs the private key (the webhook function
 * alone has `ssm:GetParameter` on it), so the function that writes secrets cannot read them back.
 * Each seal makes an ephemeral X25519 key, derives an AES-256-GCM key with HKDF-SHA256 and keeps the
 * ephemeral public key and the pair's fingerprint beside the ciphertext; the context is GCM's AAD.
 *
 * CloudFormation cannot create a SecureString, so the first seal creates the pair: the private key
 * under a name of its own fingerprint (never overwritten), then the public key without overwrite.
 * Two containers racing keep the public key that landed first; the other's private key stays unused.
 * A crash between the two writes leaves only an unused private key. Keys are read once per
 * container. Secrets sealed under the KMS key of earlier releases (`{kms: …}`) open through
 * `legacy` until `footfall secrets reseal` has moved them.
 */
export class ParameterSecretBox implements SecretBox {
  private publicKey: Promise<{ key: KeyObject; fingerprint: string }> | undefined;
  private readonly privateKeys = new Map<string, Promise<KeyObject>>();
  private readonly names: ReturnType<typeof secretsParameterNames>;

  constructor(
    private readonly ssm: SSMClient,
    /** The stack's name (`SECRETS_STACK` in the Lambda environment): the parameters' names follow from it. */
    stackName: string,
    private readonly legacy?: LegacyOpener,
  ) {
    this.names = secretsParameterNames(stackName);
  }

  async seal(plaintext: string, context: SecretContext): Promise<string> {
    const { key, fingerprint } = await this.stackPublicKey();
    const ephemeral = generateKeyPairSync('x25519');
    const epk = ephemeral.publicKey.export({ type: 'spki', format: 'der' });
    const sealed: Sealed = {
      v: 1,
      x25519: fingerprint,
      epk: epk.toString('base64'),
      ...gcmSeal(sealingKey(ephemeral.privateKey, key, epk), plaintext, context),
    };
    return JSON.stringify(sealed);
  }

  /** @throws SecretUnreadableError when tampered, bound to another context, or sealed under a key this box cannot use */
  async open(sealed: string, context: SecretContext): Promise<string> {
    const parsed = parseSealed(sealed);
    if ('x25519' in parsed) {
      const epk = Buffer.from(parsed.epk, 'base64');
      let ephemeral: KeyObject;
      try {
        ephemeral = publicFromDer(epk);
      } catch (error) {
        throw new SecretUnreadableError('a sealed secret carries no X25519 public key', { cause: error });
      }
      return gcmOpen(sealingKey(await this.stackPrivateKey(parsed.x25519), ephemeral, epk), parsed, context);
    }
    if ('kms' in parsed && this.legacy) return this.legacy.open(sealed, context);
    throw new SecretUnreadableError(
      'kms' in parsed
        ? 'the secret is sealed under the retired KMS key: run footfall secrets reseal (docs/deploy.md)'
        : 'the secret was sealed by a local key file, not the stack key',
    );
  }

  private async read(name: string): Promise<string | null> {
    try {
      const { Parameter } = await this.ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
      return Parameter?.Value ?? null;
    } catch (error) {
      if ((error as Error).name === 'ParameterNotFound') return null;
      throw error;
    }
  }

  private stackPublicKey(): Promise<{ key: KeyObject; fingerprint: string }> {
    this.publicKey ??= this.readOrCreatePublicKey().catch((error: unknown) => {
      this.publicKey = undefined;
      throw error;
    });
    return this.publicKey;
  }

  private async readOrCreatePublicKey(): Promise<{ key: KeyObject; fingerprint: string }> {
    const stored = await this.read(this.names.publicKey);
    if (stored === null) {
      const pair = generateKeyPairSync('x25519');
      const fingerprint = fingerprintOf(pair.publicKey);
      await this.put(
        this.names.privateKey(fingerprint),
        'SecureString',
        pair.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
      );
      await this.put(
        this.names.publicKey,
        'String',
        pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      );
    }
    // Read back what is stored: another container may have created it first.
    const value = stored ?? (await this.read(this.names.publicKey));
    if (value === null) throw new Error(`the secrets key ${this.names.publicKey} was created but cannot be read`);
    const key = publicFromDer(Buffer.from(value, 'base64'));
    return { key, fingerprint: fingerprintOf(key) };
  }

  /** Creates a parameter, never overwriting one: a parameter that exists is left as it is. */
  private async put(name: string, type: 'String' | 'SecureString', value: string): Promise<void> {
    try {
      await this.ssm.send(
        new PutParameterCommand({
          Name: name,
          Type: type,
          Tier: 'Standard',
          Overwrite: false,
          Value: value,
          Description: 'Footfall: the key pair that seals webhook signing secrets (docs/security.md). Never change it.',
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'ParameterAlreadyExists') throw error;
    }
  }

  private stackPrivateKey(fingerprint: string): Promise<KeyObject> {
    let key = this.privateKeys.get(fingerprint);
    if (!key) {
      key = this.readPrivateKey(fingerprint).catch((error: unknown) => {
        this.privateKeys.delete(fingerprint);
        throw error;
      });
      this.privateKeys.set(fingerprint, key);
    }
    return key;
  }

  private async readPrivateKey(fingerprint: string): Promise<KeyObject> {
    if (!/^[0-9a-f]{16}$/.test(fingerprint)) throw new SecretUnreadableError('a sealed secret names no stack key');
    const value = await this.read(this.names.privateKey(fingerprint));
    if (value === null) throw new SecretUnreadableError(`the stack key ${fingerprint} of a sealed secret is gone`);
    return createPrivateKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'pkcs8' });
  }
}
