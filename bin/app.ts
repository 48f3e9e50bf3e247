import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ensureAppBuilt } from '../app/build.js';
import { readConfig } from '../lib/config.js';
import { FootfallStack } from '../lib/footfall-stack.js';

/**
 * The CDK app (cdk.json: `node bin/run-ts.js bin/app.ts`). One
 * environment-agnostic stack, named by `-c stackName=` (default `Footfall`), so `cdk synth` needs no AWS account; settings
 * come from the context (`lib/config.ts`, `docs/deploy.md`). cdk-nag's AWS
 * Solutions pack validates the app at synthesis: any unacknowledged finding
 * fails `cdk synth` and `cdk deploy`.
 */
const app = new App();
const config = readConfig(app);
// App mode uploads app/dist: build it first when the sources changed (a no-op otherwise).
if (config.app) await ensureAppBuilt((line) => process.stderr.write(`${line}\n`));
new FootfallStack(app, config.stackName, {
  config,
  description: 'Footfall: self-hosted web analytics and revenue attribution',
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
