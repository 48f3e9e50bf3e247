import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildTrackerSync } from '../tracker/build.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Lambda entry points, bundled the way the CDK stack bundles them (`lib/lambda-defaults.ts`). */
export const LAMBDA_ENTRIES = {
  event: 'lambdas/entry/event.ts',
  health: 'lambdas/entry/health.ts',
  tracker: 'lambdas/entry/tracker-script.ts',
  sessionize: 'lambdas/entry/sessionize.ts',
  webhook: 'lambdas/entry/webhook.ts',
  scheduled: 'lambdas/entry/scheduled.ts',
  report: 'lambdas/entry/report.ts',
  mcp: 'lambdas/entry/mcp.ts',
} as const;

/**
 * The esbuild options shared by the benchmark and the CDK stack: ESM for
 * Node 22, minified, the tracker inlined as a constant, and the AWS SDK v3
 * left to the Lambda runtime, which ships it (NodejsFunction's default for
 * Node 18 and later) — it is two thirds of a bundle otherwise.
 */
export function lambdaBuildOptions() {
  return {
    bundle: true,
    minify: true,
    platform: 'node' as const,
    target: 'node22',
    format: 'esm' as const,
    mainFields: ['module', 'main'],
    // ESM bundles need require() for the CommonJS dependencies they inline.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    define: { __FOOTFALL_TRACKER__: JSON.stringify(buildTrackerSync()) },
    legalComments: 'none' as const,
    external: ['@aws-sdk/*', '@smithy/*'],
  };
}

/** Minified bundle size (bytes, raw and gzipped) of each Lambda entry. */
export async function lambdaBundleSizes(): Promise<Record<string, { bytes: number; gzip: number }>> {
  const sizes: Record<string, { bytes: number; gzip: number }> = {};
  for (const [name, entry] of Object.entries(LAMBDA_ENTRIES)) {
    const result = await build({ ...lambdaBuildOptions(), entryPoints: [`${root}${entry}`], write: false, absWorkingDir: root });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    sizes[name] = { bytes: code.length, gzip: gzipSync(code).length };
  }
  return sizes;
}
