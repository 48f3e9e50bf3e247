import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretBox } from '../../lambdas/adapters/secrets/kms-secret-box.js';
import { LOCAL_SECRET_KEY_FILE, LocalSecretBox } from '../../lambdas/adapters/secrets/local-secret-box.js';
import { SecretUnreadableError, sealedSchema } from '../../lambdas/adapters/secrets/sealed.js';
import type { SecretBox } from '../../lambdas/ports.js';

const KEY_ARN = 'arn:aws:kms:eu-central-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const CTX = { site: 'shop.test', provider: 'stripe' };
const SECRET = 'whsec_5Wg9xqkKq2QeX0zTz3Pz1y7Q5Z3m8c9D';

/**
 * KMS as the mock plays it: a data key's "ciphertext" names the key and the
 * encryption context it was made with, and Decrypt refuses any other context
 * with InvalidCiphertextException, as KMS does.
 */
function fakeKms(kms: ReturnType<typeof mockClient>): void {
  kms
    .on(GenerateDataKeyCommand)
    .callsFake((input: { KeySpec?: string; EncryptionContext?: Record<string, string> }) => {
      expect(input.KeySpec).toBe('AES_256');
      const key = randomBytes(32);
      return {
        KeyId: KEY_ARN,
        Plaintext: new Uint8Array(key),
        CiphertextBlob: new Uint8Array(
          Buffer.from(JSON.stringify({ key: key.toString('base64'), ctx: input.EncryptionContext })),
        ),
      };
    });
  kms
    .on(DecryptCommand)
    .callsFake((input: { CiphertextBlob?: Uint8Array; EncryptionContext?: Record<string, string> }) => {
      const blob = JSON.parse(Buffer.from(input.CiphertextBlob!).toString('utf8')) as {
        key: string;
        ctx: Record<string, string>;
      };
      if (JSON.stringify(blob.ctx) !== JSON.stringify(input.EncryptionContext))
        throw new InvalidCiphertextException({ message: 'InvalidCiphertextException', $metadata: {} });
      return { KeyId: KEY_ARN, Plaintext: new Uint8Array(Buffer.from(blob.key, 'base64')) };
    });
}

/** Flips one bit of the base64 field `field` of a sealed string. */
function tamper(sealed: string, field: 'ct' | 'tag' | 'iv'): string {
  const parsed = JSON.parse(sealed) as Record<string, string>;
  const bytes = Buffer.from(parsed[field]!, 'base64');
  bytes[0] = bytes[0]! ^ 1;
  return JSON.stringify({ ...parsed, [field]: bytes.toString('base64') });
}

/** What every box must do, whatever holds its key. */
function contract(make: () => Promise<SecretBox>) {
  it('opens what it sealed, and never stores the plaintext', async () => {
    const box = await make();
    const sealed = await box.seal(SECRET, CTX);
    expect(sealed).not.toContain(SECRET);
    expect(sealedSchema.safeParse(JSON.parse(sealed)).success).toBe(true);
    expect(await box.open(sealed, CTX)).toBe(SECRET);
    // A fresh IV (and, with KMS, a fresh data key) each time.
    expect(await box.seal(SECRET, CTX)).not.toBe(sealed);
  });

  it.each([
    ['another site', { site: 'other.test', provider: 'stripe' }],
    ['another provider', { site: 'shop.test', provider: 'paddle' }],
  ])('refuses a secret copied to %s', async (_, other) => {
    const box = await make();
    const sealed = await box.seal(SECRET, CTX);
    await expect(box.open(sealed, other)).rejects.toBeInstanceOf(SecretUnreadableError);
    // Even once the data key of the right context is known (cached).
    expect(await box.open(sealed, CTX)).toBe(SECRET);
    await expect(box.open(sealed, other)).rejects.toBeInstanceOf(SecretUnreadableError);
  });

  it.each(['ct', 'tag', 'iv'] as const)('refuses a sealed secret whose %s was changed', async (field) => {
    const box = await make();
    const sealed = await box.seal(SECRET, CTX);
    await expect(box.open(tamper(sealed, field), CTX)).rejects.toBeInstanceOf(SecretUnreadableError);
  });

  it.each([
    ['not JSON', 'whsec_plain'],
    ['another version', JSON.stringify({ v: 2, local: true, iv: '', tag: '', ct: '' })],
  ])('refuses %s', async (_, sealed) => {
    const box = await make();
    await expect(box.open(sealed, CTX)).rejects.toBeInstanceOf(SecretUnreadableError);
  });
}

describe('KmsSecretBox (aws-sdk-client-mock)', () => {
  const kms = mockClient(KMSClient);
  beforeEach(() => {
    kms.reset();
    fakeKms(kms);
  });

  contract(async () => new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN));

  it('asks KMS for an AES-256 data key per seal, bound to the site and provider', async () => {
    const box = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
    const sealed = JSON.parse(await box.seal(SECRET, CTX)) as { kms: string };
    const [call] = kms.commandCalls(GenerateDataKeyCommand);
    expect(call!.args[0].input).toEqual({
      KeyId: KEY_ARN,
      KeySpec: 'AES_256',
      EncryptionContext: { site: 'shop.test', provider: 'stripe' },
    });
    expect(Buffer.from(sealed.kms, 'base64').toString('utf8')).toContain('"key"');
  });

  it('decrypts each data key once per container, with the same context', async () => {
    const writer = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
    const reader = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
    const sealed = await writer.seal(SECRET, CTX);
    for (let i = 0; i < 3; i++) expect(await reader.open(sealed, CTX)).toBe(SECRET);
    const calls = kms.commandCalls(DecryptCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toMatchObject({
      KeyId: KEY_ARN,
      EncryptionContext: { site: 'shop.test', provider: 'stripe' },
    });
  });

  it('lets other KMS failures through, so the webhook answers 503 and the provider retries', async () => {
    const box = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
    const sealed = await box.seal(SECRET, CTX);
    kms.on(DecryptCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    const error = await new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN)
      .open(sealed, CTX)
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(SecretUnreadableError);
    expect((error as Error).name).toBe('ThrottlingException');
  });
});

describe('LocalSecretBox', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'secrets-box-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  contract(async () => LocalSecretBox.open(dir));

  it('keeps one 32-byte key in the data directory, readable by its owner only', async () => {
    const [a, b] = await Promise.all([LocalSecretBox.open(dir), LocalSecretBox.open(dir)]);
    const file = join(dir, LOCAL_SECRET_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file)).toHaveLength(32);
    // Two processes starting at once share the key: what one seals the other opens.
    expect(await b.open(await a.seal(SECRET, CTX), CTX)).toBe(SECRET);
    expect(await (await LocalSecretBox.open(dir)).open(await a.seal(SECRET, CTX), CTX)).toBe(SECRET);
  });

  it('does not open what another data directory sealed, nor a KMS envelope', async () => {
    const other = await mkdtemp(join(tmpdir(), 'secrets-box-'));
    try {
      const sealed = await (await LocalSecretBox.open(other)).seal(SECRET, CTX);
      await expect((await LocalSecretBox.open(dir)).open(sealed, CTX)).rejects.toBeInstanceOf(SecretUnreadableError);
      const envelope = JSON.stringify({ ...JSON.parse(sealed), local: undefined, kms: 'AAAA' });
      await expect((await LocalSecretBox.open(dir)).open(envelope, CTX)).rejects.toBeInstanceOf(SecretUnreadableError);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('refuses a key file that is not a key', async () => {
    await writeFile(join(dir, LOCAL_SECRET_KEY_FILE), 'short', { mode: 0o600 });
    await expect(LocalSecretBox.open(dir)).rejects.toThrow(/not a 32-byte key/);
  });
});
