import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { parseConfig, type FootfallConfig } from '../lib/config.js';
import { FootfallStack } from '../lib/footfall-stack.js';

/** One resource of a synthesized CloudFormation template: its logical id, type and properties. */
export interface StackResource {
  id: string;
  type: string;
  props: Readonly<Record<string, unknown>>;
}

const cdkContext = z.object({ context: z.record(z.string(), z.unknown()) });
const templateSchema = z.object({
  Resources: z.record(
    z.string(),
    z.object({ Type: z.string(), Properties: z.record(z.string(), z.unknown()).optional() }).loose(),
  ),
});

/** The resources of a template's JSON (`Template.toJSON()`, or a `cdk synth` output file). */
export function resourcesOf(template: unknown): StackResource[] {
  return Object.entries(templateSchema.parse(template).Resources).map(([id, r]) => ({
    id,
    type: r.Type,
    props: r.Properties ?? {},
  }));
}

/**
 * Synthesizes the Footfall stack as `cdk synth` does (the feature flags of `cdk.json`, the
 * configuration `config` over the defaults of `lib/config.ts`) without bundling the functions'
 * code, and returns its resources. The cloud assembly goes to a temporary directory, removed after.
 */
export function synthesizedResources(config: Partial<FootfallConfig> = {}): StackResource[] {
  const file = fileURLToPath(new URL('../cdk.json', import.meta.url));
  const { context } = cdkContext.parse(JSON.parse(readFileSync(file, 'utf8')));
  const outdir = mkdtempSync(join(tmpdir(), 'ff-cost-synth-'));
  try {
    const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    const full = { ...parseConfig({}), ...config };
    return resourcesOf(Template.fromStack(new FootfallStack(app, full.stackName, { config: full })).toJSON());
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
