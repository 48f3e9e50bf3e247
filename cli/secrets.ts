import type { Command } from 'commander';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { sealedUnderKms } from '../lambdas/adapters/secrets/sealed.js';
import { contextOf } from './main.js';
import { UsageError } from './usage.js';
import { secretBoxFor, withStore } from './store.js';

/**
 * `secrets reseal`: moves the webhook secrets sealed under the KMS key of earlier releases to the
 * stack's key in Parameter Store (`docs/deploy.md`, "Webhook secrets leave the KMS key"), before
 * the key is given up. Resumable and idempotent: a secret already moved is left alone.
 */
export function registerSecretsCommands(program: Command): void {
  const secrets = program.command('secrets').description('webhook signing secrets at rest');
  secrets
    .command('reseal')
    .description(
      'seal again, under the key in Parameter Store, every webhook secret still sealed under the KMS key (with --aws and --kms-key)',
    )
    .action(async (_opts: unknown, command: Command) => {
      const ctx = contextOf(command);
      if (ctx.aws && !ctx.aws.kmsKey)
        throw new UsageError('--kms-key: is required with --aws to reseal (the SecretsKeyArn output of the stack)');
      const box = await secretBoxFor(ctx);
      const result = await withStore(ctx, (db) => new DynamoConfigStore(db, box).resealProviderSecrets(sealedUnderKms));
      if (ctx.json) ctx.printJson(result);
      else ctx.print(`${result.resealed} secrets sealed again under the stack key; ${result.kept} already were`);
    });
}
