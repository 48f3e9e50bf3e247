import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ensureAppBuilt } from '../app/build.js';
import { addStacks } from '../lib/stacks.js';
import { readConfig } from '../lib/config.js';

/**
 * The CDK app (cdk.json: `node bin/run-ts.js bin/app.ts`). One
 * environment-agnostic stack, named by `-c stackName=` (default `Footfall`), so `cdk synth` needs no AWS account
 * (or, for a custom domain without its certificate yet, the certificate stack: `lib/stacks.ts`); settings
 * come from the context (`lib/config.ts`, `docs/deploy.md`). cdk-nag's AWS
 * Solutions pack validates the app at synthesis: any unacknowledged finding
 * fails `cdk synth` and `cdk deploy`.
 */
const app = new App();
const config = readConfig(app);
// App mode uploads app/dist: build it first when the sources changed (a no-op otherwise).
if (config.app) await ensureAppBuilt((line) => process.stderr.write(`${line}\n`));
addStacks(app, config, { log: (line) => process.stderr.write(`${line}\n`) });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
