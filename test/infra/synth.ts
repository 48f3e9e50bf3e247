import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseConfig, type FootfallConfig } from '../../lib/config.js';
import { FootfallStack } from '../../lib/footfall-stack.js';
import type { FunctionSpec } from '../../lib/functions.js';

/** The feature flags of cdk.json, so tests synthesize what `cdk synth` does. */
const cdkJson = JSON.parse(readFileSync(fileURLToPath(new URL('../../cdk.json', import.meta.url)), 'utf8')) as {
  context: Record<string, unknown>;
};

export interface Synthesized {
  stack: FootfallStack;
  template: Template;
  /** cdk-nag AWS Solutions findings that were not acknowledged. */
  nagViolations: () => Array<{ ruleName: string; resources: string[] }>;
}

/**
 * Synthesizes a Footfall stack. `bundle: false` skips esbuild (the functions
 * get placeholder code), for tests about wiring rather than code.
 */
export function synth(options: { config?: Partial<FootfallConfig>; functions?: Record<string, FunctionSpec>; bundle?: boolean } = {}): Synthesized {
  const app = new App({
    context: { ...cdkJson.context, ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}) },
  });
  const stack = new FootfallStack(app, 'Footfall', {
    config: { ...parseConfig({}), ...options.config },
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
