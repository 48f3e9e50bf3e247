import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
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
  filtered: 'lambdas/entry/filtered-function.ts',
} as const;

/**
 * The DuckDB-using wiring, bundled as a file of its own beside the entry's in the functions that read
 * or write the visit table (`lib/lambda-defaults.ts`), and imported at their first use
 * (`lambdas/entry/duckdb-chunk.ts`): `file` is its name beside `index.mjs`.
 */
export const DUCKDB_CHUNK = { entry: 'lambdas/wiring/visit-table-deps.ts', file: 'duckdb.mjs' } as const;

/**
 * The esbuild options shared by the benchmark and the CDK stack: ESM for
 * Node 22, minified, the tracker inlined as a constant, and the AWS SDK v3
 * left to the Lambda runtime, which ships it (NodejsFunction's default for
 * Node 18 and later) — it is two thirds of a bundle otherwise.
 */
export function lambdaBuildOptions({ tracker = true }: { tracker?: boolean } = {}) {
  return {
    bundle: true,
    minify: true,
    platform: 'node' as const,
    target: 'node22',
    format: 'esm' as const,
    mainFields: ['module', 'main'],
    // ESM bundles need require() for the CommonJS dependencies they inline.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    define: {
      ...(tracker ? { __FOOTFALL_TRACKER__: JSON.stringify(buildTrackerSync()) } : {}),
      __FOOTFALL_DUCKDB_CHUNK__: JSON.stringify(`./${DUCKDB_CHUNK.file}`),
    },
    legalComments: 'none' as const,
    // DuckDB's native library (a .node file and its .so) is not bundled: the DuckDB layer holds it (lib/visit-table.ts).
    external: ['@aws-sdk/*', '@smithy/*', '@duckdb/node-bindings-*'],
  };
}

/** The esbuild executable of the install (the same that NodejsFunction runs locally). */
export const ESBUILD_BIN = createRequire(import.meta.url).resolve('esbuild/bin/esbuild');

/**
 * The esbuild command line (arguments after the executable) that bundles the DuckDB chunk into
 * `outDir` with the shared options: run by the CDK stack after an entry's bundle (NodejsFunction's
 * `afterBundling`, which only takes shell commands) and by the benchmark. Nothing is `define`d: the
 * chunk reads neither the tracker nor the chunk's own name.
 * @param rootDir the repository root (NodejsFunction's input directory)
 */
export function duckdbChunkArgs(rootDir: string, outDir: string): string[] {
  const o = lambdaBuildOptions({ tracker: false });
  return [
    join(rootDir, DUCKDB_CHUNK.entry),
    '--bundle',
    '--minify',
    `--platform=${o.platform}`,
    `--target=${o.target}`,
    `--format=${o.format}`,
    `--main-fields=${o.mainFields.join(',')}`,
    `--banner:js=${o.banner.js}`,
    `--legal-comments=${o.legalComments}`,
    ...o.external.map((e) => `--external:${e}`),
    '--log-level=warning',
    `--outfile=${join(outDir, DUCKDB_CHUNK.file)}`,
  ];
}

/** The name of the DuckDB chunk's size in `lambdaBundleSizes`. */
export const DUCKDB_CHUNK_SIZE = 'duckdb-chunk';

/** Minified bundle size (bytes, raw and gzipped) of each Lambda entry, and of the DuckDB chunk (`DUCKDB_CHUNK_SIZE`). */
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
  const dir = mkdtempSync(join(tmpdir(), 'footfall-chunk-'));
  try {
    execFileSync(ESBUILD_BIN, duckdbChunkArgs(root, dir), { stdio: 'inherit' });
    const code = readFileSync(join(dir, DUCKDB_CHUNK.file));
    sizes[DUCKDB_CHUNK_SIZE] = { bytes: code.length, gzip: gzipSync(code).length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
