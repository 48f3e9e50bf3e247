import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretBox } from '../../lambdas/adapters/secrets/kms-secret-box.js';
import {
  GetParameterCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { ParameterSecretBox } from '../../lambdas/adapters/secrets/parameter-secret-box.js';
import { secretsParameterNames } from '../../lambdas/adapters/secrets/parameter-name.js';
import { sealedUnderKms } from '../../lambdas/adapters/secrets/sealed.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { memoryTable } from '../support/dynamo.js';
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
  // The class mock stubs every KMS client's `send`: later files sharing this process need the real one back.
  afterAll(() => kms.restore());
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

/**
 * Parameter Store as the mock plays it: parameters by name, `PutParameter` without overwrite refused
 * with ParameterAlreadyExists and `GetParameter` of an unknown name with ParameterNotFound, as SSM
 * does; `denied` names the parameters the caller's role may not read (AccessDeniedException).
 */
function fakeParameterStore(ssm: ReturnType<typeof mockClient>, denied: (name: string) => boolean = () => false) {
  const stored = new Map<string, { Type?: string; Value?: string }>();
  ssm
    .on(PutParameterCommand)
    .callsFake((input: { Name: string; Type?: string; Value?: string; Overwrite?: boolean }) => {
      if (stored.has(input.Name) && !input.Overwrite)
        throw new ParameterAlreadyExists({ message: 'ParameterAlreadyExists', $metadata: {} });
      stored.set(input.Name, { Type: input.Type, Value: input.Value });
      return { Version: 1 };
    });
  ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
    if (denied(input.Name)) throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    const p = stored.get(input.Name);
    if (!p) throw new ParameterNotFound({ message: 'ParameterNotFound', $metadata: {} });
    return { Parameter: { Name: input.Name, ...p } };
  });
  return stored;
}

describe('ParameterSecretBox (aws-sdk-client-mock)', () => {
  const ssm = mockClient(SSMClient);
  const kms = mockClient(KMSClient);
  afterAll(() => {
    ssm.restore();
    kms.restore();
  });
  const names = secretsParameterNames('Footfall');
  let stored: Map<string, { Type?: string; Value?: string }>;
  const client = () => new SSMClient({ region: 'eu-central-1' });
  beforeEach(() => {
    ssm.reset();
    kms.reset();
    fakeKms(kms);
    stored = fakeParameterStore(ssm);
  });

  contract(async () => new ParameterSecretBox(client(), 'Footfall'));

  it('creates the key pair on the first seal: the private key a SecureString named by its fingerprint, the public key a String', async () => {
    const sealed = JSON.parse(await new ParameterSecretBox(client(), 'Footfall').seal(SECRET, CTX)) as {
      x25519: string;
    };
    expect(stored.get(names.publicKey)?.Type).toBe('String');
    expect(stored.get(names.privateKey(sealed.x25519))?.Type).toBe('SecureString');
    expect([...stored.keys()].sort()).toEqual([names.privateKey(sealed.x25519), names.publicKey].sort());
    expect(ssm.commandCalls(PutParameterCommand).every((c) => c.args[0].input.Overwrite === false)).toBe(true);
  });

  it('seals with the public key only: a sealer that may not read private keys cannot open what it sealed', async () => {
    ssm.reset();
    stored = fakeParameterStore(ssm, (name) => name.startsWith(`${names.privateKeys}/`));
    const app = new ParameterSecretBox(client(), 'Footfall');
    const sealed = await app.seal(SECRET, CTX);
    const error = await app.open(sealed, CTX).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AccessDeniedException');
  });

  it('keeps one key pair when two containers seal first at once, and reads each key once per container', async () => {
    const [a, b] = await Promise.all([
      new ParameterSecretBox(client(), 'Footfall').seal(SECRET, CTX),
      new ParameterSecretBox(client(), 'Footfall').seal('whsec_other_secret_value', CTX),
    ]);
    const webhook = new ParameterSecretBox(client(), 'Footfall');
    expect(await webhook.open(a, CTX)).toBe(SECRET);
    expect(await webhook.open(b, CTX)).toBe('whsec_other_secret_value');
    expect(JSON.parse(a).x25519).toBe(JSON.parse(b).x25519);
    const privateReads = ssm
      .commandCalls(GetParameterCommand)
      .filter((c) => c.args[0].input.Name?.startsWith(`${names.privateKeys}/`));
    expect(privateReads).toHaveLength(1);
  });

  it('opens a secret sealed under the KMS key of earlier releases only with the legacy opener, and says to reseal', async () => {
    const old = await new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN).seal(SECRET, CTX);
    expect(sealedUnderKms(old)).toBe(true);
    const legacy = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
    expect(await new ParameterSecretBox(client(), 'Footfall', legacy).open(old, CTX)).toBe(SECRET);
    await expect(new ParameterSecretBox(client(), 'Footfall').open(old, CTX)).rejects.toThrow(/secrets reseal/);
  });

  it('lets Parameter Store failures through, so the webhook answers 503 and the provider retries', async () => {
    const sealed = await new ParameterSecretBox(client(), 'Footfall').seal(SECRET, CTX);
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    const error = await new ParameterSecretBox(client(), 'Footfall').open(sealed, CTX).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(SecretUnreadableError);
    expect((error as Error).name).toBe('ThrottlingException');
  });
});

describe('footfall secrets reseal: secrets sealed under the KMS key move to the key pair before the key is given up (dynalite)', () => {
  const ssm = mockClient(SSMClient);
  const kms = mockClient(KMSClient);
  afterAll(() => {
    ssm.restore();
    kms.restore();
  });
  beforeEach(() => {
    ssm.reset();
    kms.reset();
    fakeKms(kms);
    fakeParameterStore(ssm);
  });

  it('re-seals every KMS-sealed secret once, leaves the others, and the webhook then opens them without KMS', async () => {
    const { conn, close } = await memoryTable([{ domain: 'shop.test' }, { domain: 'other.test' }]);
    try {
      const kmsBox = new KmsSecretBox(new KMSClient({ region: 'eu-central-1' }), KEY_ARN);
      const before = new DynamoConfigStore(conn, kmsBox);
      const now = new Date('2026-11-27T00:00:00Z');
      await before.connectProvider('shop.test', 'stripe', 'whsec_shop_stripe_secret', now);
      await before.connectProvider('shop.test', 'paddle', 'pdl_shop_paddle_secret', now);
      await before.connectProvider('other.test', 'stripe', 'whsec_other_stripe_secret', now);
      const migrating = new ParameterSecretBox(new SSMClient({ region: 'eu-central-1' }), 'Footfall', kmsBox);
      // One connected again after the release, already under the key pair.
      await new DynamoConfigStore(conn, migrating).connectProvider('other.test', 'stripe', 'whsec_new_secret', now);

      const store = new DynamoConfigStore(conn, migrating);
      expect(await store.resealProviderSecrets(sealedUnderKms)).toEqual({ resealed: 2, kept: 1 });
      expect(await store.resealProviderSecrets(sealedUnderKms)).toEqual({ resealed: 0, kept: 3 });

      // The key is given up: KMS refuses everything, and the webhook has no legacy opener.
      kms.reset();
      kms
        .onAnyCommand()
        .rejects(Object.assign(new Error('key pending deletion'), { name: 'KMSInvalidStateException' }));
      const webhook = new DynamoConfigStore(
        conn,
        new ParameterSecretBox(new SSMClient({ region: 'eu-central-1' }), 'Footfall'),
      );
      expect(await webhook.providerSecret('shop.test', 'stripe')).toBe('whsec_shop_stripe_secret');
      expect(await webhook.providerSecret('shop.test', 'paddle')).toBe('pdl_shop_paddle_secret');
      expect(await webhook.providerSecret('other.test', 'stripe')).toBe('whsec_new_secret');
    } finally {
      await close();
    }
  });
});
