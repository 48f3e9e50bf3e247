import { App } from 'aws-cdk-lib';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../lib/config.js';
import { FootfallStack } from '../lib/footfall-stack.js';
import { FUNCTIONS } from '../lib/functions.js';
import { POLICIES_FILE, functionPolicies } from '../local/iam/policies.js';
import { LOCAL_REPORT_SENDER } from '../local/iam/authorizer.js';

/**
 * Writes `local/iam/policies.json`: every function's identity policy as `cdk synth -c app=true`
 * produces it (with the twin's report sender, `LOCAL_REPORT_SENDER`, and filtered reports, which the twin serves), which the local twin enforces (`local/iam/`). Run after changing a grant:
 * `npm run iam:policies`; test/infra/iam-policies.test.ts fails while the file is stale.
 */
const cdkJson = JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const outdir = mkdtempSync(join(tmpdir(), 'ff-cdk-out-'));
try {
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FootfallStack(app, 'Footfall', {
    config: { ...parseConfig({}), app: true, reportSender: LOCAL_REPORT_SENDER, filteredReports: true },
  });
  const template = app.synth().getStackByName(stack.stackName).template as Parameters<typeof functionPolicies>[0];
  writeFileSync(POLICIES_FILE, `${JSON.stringify(functionPolicies(template, Object.keys(FUNCTIONS)), null, 2)}\n`);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
