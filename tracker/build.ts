/**
 * Builds the tracking script served at `GET /v.js` from tracker/src/v.ts.
 *
 * The server and the CDK stack call `buildTrackerSync()` and serve its result;
 * run directly (`node bin/run-ts.js tracker/build.ts`, or `npm run build:tracker`)
 * it writes tracker/dist/v.js and prints the sizes against the 1,000-byte gzip budget.
 */
import { buildSync } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('.', import.meta.url));

/** Size budget for the served script, gzipped. */
export const TRACKER_GZIP_BUDGET = 1000;

/** Bundles and minifies the tracker into one IIFE (ES2017) and returns its code. */
export function buildTrackerSync(): string {
  const result = buildSync({
    entryPoints: [resolve(here, 'src/v.ts')],
    bundle: true,
    minify: true,
    target: 'es2017',
    format: 'iife',
    platform: 'browser',
    legalComments: 'none',
    // The repo tsconfig is strict, which would add a "use strict" prologue the IIFE does not need.
    tsconfigRaw: {},
    write: false,
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output for tracker/src/v.ts');
  return file.text;
}

/** Raw, gzip (level 9) and brotli (quality 11) sizes in bytes of the given code. */
export function trackerSizes(code: string): { raw: number; gzip: number; brotli: number } {
  const buf = Buffer.from(code, 'utf8');
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
    }).length,
  };
}

// Run directly: write tracker/dist/v.js and report the sizes (non-zero exit when over budget).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const code = buildTrackerSync();
  mkdirSync(resolve(here, 'dist'), { recursive: true });
  writeFileSync(resolve(here, 'dist/v.js'), code);
  const sizes = trackerSizes(code);
  console.log(
    `tracker/dist/v.js  raw ${sizes.raw} B  gzip ${sizes.gzip} B  brotli ${sizes.brotli} B  (budget ${TRACKER_GZIP_BUDGET} B gzip)`,
  );
  if (sizes.gzip > TRACKER_GZIP_BUDGET) process.exitCode = 1;
}
