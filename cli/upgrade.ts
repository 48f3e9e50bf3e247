import { Command, Option } from 'commander';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import * as z from 'zod';
import { contextOf, parseArgs } from './main.js';
import { withStore } from './store.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { readDeployedStack } from '../lambdas/adapters/deployed-stack.js';
import { DATA_LAYOUT } from '../lambdas/domain/site.js';
import { upgradePlan, type UpgradePlan } from '../lambdas/domain/upgrade.js';
import { RELEASE_VERSION } from '../lib/release.js';

/** CloudFormation stack names: a letter, then letters, digits and hyphens, at most 128 (CloudFormation API reference). */
const stackName = z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a CloudFormation stack name');

function describePlan(plan: UpgradePlan): string {
  const lines = [
    `this release: ${plan.to.version}, layout ${plan.to.layout}`,
    plan.from
      ? `deployed: ${plan.from.version ?? 'a release before the Version output'}, layout ${plan.from.layout ?? 'unknown'}`
      : 'deployed: not read (local data directory)',
    ...plan.notes,
    ...plan.sites.map((s) => `${s.domain} (layout ${s.layout}): ${s.action}: ${s.notes.join('; ')}`),
    plan.safe ? 'safe to deploy' : 'do not deploy yet: see above',
  ];
  return lines.join('\n');
}

/**
 * `upgrade check`: what deploying this release will do to the data
 * (`docs/deploy.md`, "Upgrading"), read-only. Exits 1 when it must not be
 * deployed yet (a rebuild in flight, a newer layout, a downgrade).
 */
export function registerUpgradeCommands(program: Command): void {
  const upgrade = program.command('upgrade').description('upgrade a deployment to this release (docs/deploy.md)');
  upgrade
    .command('check')
    .description(
      "pre-flight: read the deployed stack's version (with --aws) and every site's storage layout, and say what deploying this release will do; changes nothing",
    )
    .addOption(
      new Option('--stack <name>', 'with --aws: the CloudFormation stack name')
        .env('FOOTFALL_STACK')
        .default('Footfall'),
    )
    .option(
      '--drain-stream',
      'the deploy will set -c drainStream=true (a stack that still ingests through its Kinesis stream needs it)',
    )
    .action(async (opts: { stack: string; drainStream?: boolean }, command: Command) => {
      const ctx = contextOf(command);
      const deployed = ctx.aws
        ? await readDeployedStack(new CloudFormationClient({}), parseArgs(stackName, opts.stack, '--stack'))
        : null;
      const sites = await withStore(ctx, (db) => new DynamoConfigStore(db).listSites());
      const plan = upgradePlan(
        deployed,
        sites,
        { version: RELEASE_VERSION, layout: DATA_LAYOUT },
        { drainStream: opts.drainStream === true },
      );
      if (ctx.json) ctx.printJson(plan);
      else ctx.print(describePlan(plan));
      if (!plan.safe) throw new Error('upgrade check: not safe to deploy yet (see above)');
    });
}
