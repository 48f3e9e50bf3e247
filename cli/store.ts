import { openLocalStore } from '../local/service.js';
import { createDynamoConnection, type DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretBox } from '../lambdas/adapters/secrets/kms-secret-box.js';
import { LocalSecretBox } from '../lambdas/adapters/secrets/local-secret-box.js';
import { ParameterSecretBox } from '../lambdas/adapters/secrets/parameter-secret-box.js';
import { SSMClient } from '@aws-sdk/client-ssm';
import { CONFIG_DEFAULTS } from '../lib/config.js';
import type { SecretBox } from '../lambdas/ports.js';
import { UsageError, type CliContext } from './main.js';

/** How a command's own dynalite runs (`openLocalDynamo`); a running `serve`'s is used as it runs. */
export interface LocalStoreOptions {
  /**
   * Dynalite in a worker thread of its own rather than in the command's: for bulk commands (`import
   * payments`, a provider's history), whose requests then keep both cores busy. @default false
   */
  dynaliteThread?: boolean;
}

/**
 * Runs `fn` against the data directory's table: through a running `serve`'s
 * dynalite when there is one, else on a dynalite of our own for the command
 * (`owner` true: no server runs on this data directory).
 */
export async function withLocalStore<T>(
  dataDir: string,
  fn: (dynamo: DynamoConnection, owner: boolean) => Promise<T>,
  options: LocalStoreOptions = {},
): Promise<T> {
  const { dynamo, db } = await openLocalStore(dataDir, 'cli', options);
  try {
    return await fn(dynamo, db.owner);
  } finally {
    dynamo.doc.destroy();
    await db.close();
  }
}

/**
 * Runs `fn` against the table the command works on: the deployed stack's with
 * `--aws` (admin commands against AWS, `docs/deploy.md`), else the local data
 * directory's (see `withLocalStore`; `options` apply there).
 */
export async function withStore<T>(
  ctx: CliContext,
  fn: (dynamo: DynamoConnection) => Promise<T>,
  options: LocalStoreOptions = {},
): Promise<T> {
  if (!ctx.aws) return withLocalStore(ctx.dataDir, (dynamo) => fn(dynamo), options);
  const dynamo = createDynamoConnection({ table: ctx.aws.table });
  try {
    return await fn(dynamo);
  } finally {
    dynamo.doc.destroy();
  }
}

/**
 * What seals webhook secrets for the command: with `--aws`, the stack's key in Parameter Store
 * (`--stack-name`; the caller's credentials need `ssm:GetParameter` on its public key, and
 * `ssm:PutParameter` for the first secret, `docs/security.md`), opening secrets of earlier releases with the KMS key
 * of `--kms-key` when given; else the data directory's key file.
 */
export async function secretBoxFor(ctx: CliContext): Promise<SecretBox> {
  if (!ctx.aws) return LocalSecretBox.open(ctx.dataDir);
  const { kmsKey, stackName = CONFIG_DEFAULTS.stackName } = ctx.aws;
  return new ParameterSecretBox(
    new SSMClient({}),
    stackName,
    kmsKey ? new KmsSecretBox(new KMSClient({}), kmsKey) : undefined,
  );
}

/** For commands that need the local stream or archive. @throws UsageError with `--aws` */
export function localOnly(ctx: CliContext, command: string): void {
  if (ctx.aws) throw new UsageError(`${command}: works on a local data directory only, not with --aws`);
}
