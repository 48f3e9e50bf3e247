import { Command, CommanderError, Option } from 'commander';
import * as z from 'zod';
import { RELEASE_VERSION } from '../lib/release.js';
import { registerAdminCommands, registerKeyCommands, registerProviderCommands } from './admin.js';
import { registerServeCommands } from './serve.js';
import { registerSqlCommand } from './sql.js';
import { registerStartCommand } from './start.js';
import { registerStreamCommands } from './stream.js';
import { registerRebuildCommand } from './rebuild.js';
import { registerImportCommands } from './import.js';
import { registerFxCommands } from './fx.js';
import { registerGeoCommands } from './geo.js';
import { registerUserCommands } from './users.js';
import { registerUpgradeCommands } from './upgrade.js';
import { registerEraseCommand } from './erase.js';
import { registerReportsCommands } from './reports.js';
import { UsageError } from './usage.js';
import { registerSecretsCommands } from './secrets.js';
import { CONFIG_DEFAULTS } from '../lib/config.js';

export { UsageError, parseArgs, parseFields } from './usage.js';

/** What every command receives: where the data is and how to print. */
export interface CliContext {
  dataDir: string;
  json: boolean;
  /**
   * `--aws`: the deployed table (credentials and region from the AWS environment) instead of the local data directory;
   * `stackName` (`--stack-name`) names the Parameter Store key pair that seals webhook secrets; `kmsKey` (`--kms-key`, the SecretsKeyArn output of a stack deployed with
   * `-c legacySecretsKey=true`) opens those sealed by earlier releases.
   */
  aws: { table: string; kmsKey?: string; stackName?: string } | null;
  print(text: string): void;
  printJson(value: unknown): void;
}

export function contextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<{
    data: string;
    json?: boolean;
    aws?: boolean;
    table?: string;
    kmsKey?: string;
    stackName: string;
  }>();
  if (options.aws && !options.table)
    throw new UsageError('--table: is required with --aws (the TableName output of the stack)');
  return {
    dataDir: options.data,
    json: options.json ?? false,
    aws: options.aws
      ? {
          table: options.table as string,
          stackName: options.stackName,
          ...(options.kmsKey ? { kmsKey: options.kmsKey } : {}),
        }
      : null,
    print: (text) => process.stdout.write(`${text}\n`),
    printJson: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}

export function buildProgram(): Command {
  const program = new Command('footfall')
    .description('Footfall: self-hosted web analytics and revenue attribution')
    .version(RELEASE_VERSION, '-V, --version', 'print the version of footfall')
    .addOption(new Option('--data <dir>', 'data directory of the local service').env('FOOTFALL_DATA').default('.data'))
    .option('--json', 'print JSON instead of text')
    .option('--aws', "work on the deployed stack's table (AWS credentials and region from the environment)")
    .addOption(
      new Option('--table <name>', 'the DynamoDB table of the deployed stack (with --aws)').env('FOOTFALL_TABLE'),
    )
    .addOption(
      new Option(
        '--stack-name <name>',
        'with --aws: the stack whose Parameter Store key pair seals webhook secrets (-c stackName of the deploy)',
      )
        .env('FOOTFALL_STACK')
        .default(CONFIG_DEFAULTS.stackName),
    )
    .addOption(
      new Option(
        '--kms-key <arn>',
        'the KMS key of webhook secrets sealed by earlier releases (with --aws: the SecretsKeyArn output, for secrets reseal)',
      ).env('FOOTFALL_KMS_KEY'),
    )
    .showHelpAfterError(false)
    .exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerServeCommands(program);
  registerStartCommand(program);
  registerStreamCommands(program);
  registerRebuildCommand(program);
  registerImportCommands(program);
  registerAdminCommands(program);
  registerProviderCommands(program);
  registerSecretsCommands(program);
  registerKeyCommands(program);
  registerUserCommands(program);
  registerSqlCommand(program);
  registerFxCommands(program);
  registerGeoCommands(program);
  registerUpgradeCommands(program);
  registerEraseCommand(program);
  registerReportsCommands(program);
  for (const command of program.commands) applyExitOverride(command);
  return program;
}

function applyExitOverride(command: Command): void {
  command.exitOverride();
  command.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  for (const sub of command.commands) applyExitOverride(sub);
}

/**
 * Runs the CLI. Returns the exit code: 0 on success, 2 for bad arguments,
 * 1 for other failures (one line on stderr each).
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0)
        return 0;
      // Commander has already printed its one-line message.
      return 2;
    }
    if (error instanceof UsageError || error instanceof z.ZodError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`error: ${(error as Error).message}\n`);
    return 1;
  }
}
