import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig, type FootfallConfig } from '../../lib/config.js';
import { FootfallStack } from '../../lib/footfall-stack.js';
import type { FunctionSpec } from '../../lib/functions.js';
import { recordSynthOutput } from '../support/synth-outputs.js';

export { removeSynthOutputs } from '../support/synth-outputs.js';

/** The feature flags of cdk.json, so tests synthesize what `cdk synth` does. */
const cdkJson = JSON.parse(readFileSync(fileURLToPath(new URL('../../cdk.json', import.meta.url)), 'utf8')) as {
  context: Record<string, unknown>;
};

/**
 * A CDK App whose cloud assembly goes to a temp directory of ours. Without an
 * `outdir`, CDK makes `$TMPDIR/cdk.outXXXXXX` for every App and never removes
 * it (`npm test` once left hundreds); these are removed after the
 * test file that made them (`removeSynthOutputs`, run after every file by test/support/setup.ts).
 */
export function testApp(props: AppProps = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), 'ff-cdk-out-'));
  recordSynthOutput(outdir);
  return new App({ ...props, outdir });
}

export interface Synthesized {
  stack: FootfallStack;
  template: Template;
  /** cdk-nag AWS Solutions findings that were not acknowledged. */
  nagViolations: () => Array<{ ruleName: string; resources: string[] }>;
}

/**
 * Synthesizes a Footfall stack. `bundle: false` skips esbuild (the functions
 * get placeholder code), for tests about wiring rather than code.
 * `validate: true` runs CDK's built-in CloudFormation template validation as `cdk synth` does (with cdk.json's
 * `validateAgainstDefaultRules`, a finding fails the synth). It is off by default: its rule engine costs about
 * ten CPU-seconds in each test process that synthesizes, and test/infra/deploy-flags.test.ts and the bundled stack
 * of test/infra/stack.test.ts validate every documented flag set.
 */
export function synth(
  options: {
    config?: Partial<FootfallConfig>;
    functions?: Record<string, FunctionSpec>;
    bundle?: boolean;
    validate?: boolean;
  } = {},
): Synthesized {
  const app = testApp({
    context: { ...cdkJson.context, ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}) },
    builtinCloudFormationValidation: options.validate ?? false,
  });
  const config = { ...parseConfig({}), ...options.config };
  const stack = new FootfallStack(app, config.stackName, {
    config,
    ...(options.functions ? { functions: options.functions } : {}),
  });
  const template = Template.fromStack(stack);
  return {
    stack,
    template,
    nagViolations: () => {
      const report = new AwsSolutionsChecks().validateScope(stack);
      return report.violations.map((v) => ({
        ruleName: v.ruleName,
        resources: v.violatingResources.map((r) => r.constructPath ?? r.resourceLogicalId ?? '?'),
      }));
    },
  };
}

/** Every acknowledgment (rule id → reason) recorded anywhere in the construct tree. */
export function acknowledgments(stack: FootfallStack): Array<{ path: string; id: string; reason: string }> {
  const found: Array<{ path: string; id: string; reason: string }> = [];
  for (const construct of stack.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: construct.node.path, id, reason });
      }
    }
  }
  return found;
}
