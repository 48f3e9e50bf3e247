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
  app: 'lambdas/entry/app.ts',
  operations: 'lambdas/entry/operations.ts',
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
    // DuckDB's native library (a .node file and its .so) is not bundled: the DuckDB layer holds it (lib/visit-table.ts).
    external: ['@aws-sdk/*', '@smithy/*', '@duckdb/node-bindings-*'],
  };
}

/** Minified bundle size (bytes, raw and gzipped) of each Lambda entry. */
export async function lambdaBundleSizes(): Promise<Record<string, { bytes: number; gzip: number }>> {
  const sizes: Record<string, { bytes: number; gzip: number }> = {};
  for (const [name, entry] of Object.entries(LAMBDA_ENTRIES)) {
    const result = await build({
      ...lambdaBuildOptions(),
      entryPoints: [`${root}${entry}`],
      write: false,
      absWorkingDir: root,
    });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    sizes[name] = { bytes: code.length, gzip: gzipSync(code).length };
  }
  return sizes;
}

/**
 * Cold-start module load time of each Lambda bundle: a fresh Node process
 * importing the minified bundle (the runtime's SDK resolved from
 * node_modules, as the Lambda runtime provides it), median of 5, in ms.
 * `env` adds environment variables per entry: the event function's
 * `GEO_DATABASE_PATH`, so its figure includes reading the country database
 * as in AWS, where the layer's file is read during init.
 */
export async function coldStartMs(env: Record<string, Record<string, string>> = {}): Promise<Record<string, number>> {
  const { mkdir, writeFile, rm } = await import('node:fs/promises');
  const { execFileSync } = await import('node:child_process');
  const dir = `${root}bench/.cold/`;
  await mkdir(dir, { recursive: true });
  const out: Record<string, number> = {};
  try {
    for (const [name, entry] of Object.entries(LAMBDA_ENTRIES)) {
      const result = await build({
        ...lambdaBuildOptions(),
        entryPoints: [`${root}${entry}`],
        write: false,
        absWorkingDir: root,
      });
      const file = `${dir}${name}.mjs`;
      await writeFile(file, result.outputFiles[0]?.contents ?? new Uint8Array());
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const script = `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`;
        const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
          env: {
            ...process.env,
            ...env[name],
            TABLE_NAME: 'bench',
            STREAM_NAME: 'bench',
            AWS_REGION: 'us-east-1',
            POWERTOOLS_METRICS_DISABLED: 'true',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
          encoding: 'utf8',
        });
        runs.push(Number(printed.trim().split('\n').pop()));
      }
      runs.sort((a, b) => a - b);
      out[name] = runs[2] ?? Number.NaN;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
