import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { Stack } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUCKDB_CHUNK, LAMBDA_ENTRIES, lambdaBuildOptions } from '../../bench/bundle.js';
import { FootfallFunction, PROJECT_ROOT, sharedBundling } from '../../lib/lambda-defaults.js';
import { testApp } from './synth.js';

/**
 * The filtered and operations bundles leave DuckDB's JavaScript out: it is a file of its own beside
 * `index.mjs` (`DUCKDB_CHUNK`), written by the stack's bundling hook and imported at the first filtered
 * call or visit-table write, so a cold start of those functions does not parse it. The report and MCP
 * bundles do not even name it: they invoke the filtered function for filtered reports.
 */
const DUCKDB_CODE = /DuckDBInstance|node-bindings/;
let dir: string;
const bundles: Record<string, string> = {};

beforeAll(async () => {
  // Under the repository, so the bundles' external packages resolve from its node_modules as from the layer.
  mkdirSync(join(PROJECT_ROOT, '.cache'), { recursive: true });
  dir = mkdtempSync(join(PROJECT_ROOT, '.cache', 'duckdb-chunk-'));
  for (const name of ['report', 'mcp', 'operations'] as const) {
    mkdirSync(join(dir, name));
    await build({
      ...lambdaBuildOptions(),
      entryPoints: [join(PROJECT_ROOT, LAMBDA_ENTRIES[name])],
      outfile: join(dir, name, 'index.mjs'),
      absWorkingDir: PROJECT_ROOT,
    });
    bundles[name] = readFileSync(join(dir, name, 'index.mjs'), 'utf8');
  }
  // The filtered function's asset as the stack bundles it: NodejsFunction's esbuild, then its hook.
  const app = testApp();
  new FootfallFunction(new Stack(app, 'Chunk'), 'Filtered', {
    entry: LAMBDA_ENTRIES.filtered,
    service: 'filtered',
    logRetention: logs.RetentionDays.ONE_DAY,
    duckdbChunk: true,
  });
  app.synth();
  const asset = readdirSync(app.outdir).find((d) => d.startsWith('asset.'));
  cpSync(join(app.outdir, asset ?? 'none'), join(dir, 'filtered'), { recursive: true });
  bundles.filtered = readFileSync(join(dir, 'filtered', 'index.mjs'), 'utf8');
}, 240_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the DuckDB chunk', () => {
  it('is not in the filtered and operations bundles, which import it by its file name, nor named by report and MCP', () => {
    expect(Object.keys(bundles).sort()).toEqual(['filtered', 'mcp', 'operations', 'report']);
    for (const [name, code] of Object.entries(bundles)) {
      expect(code, name).not.toMatch(DUCKDB_CODE);
      if (name === 'report' || name === 'mcp') expect(code, name).not.toContain(DUCKDB_CHUNK.file);
      else expect(code, name).toContain(`"./${DUCKDB_CHUNK.file}"`);
    }
  });

  it("is written beside the entry's bundle in the function's asset by the stack's bundling hook, and holds DuckDB's JavaScript", () => {
    const chunk = readFileSync(join(dir, 'filtered', DUCKDB_CHUNK.file), 'utf8');
    expect(chunk).toMatch(DUCKDB_CODE);
    expect(chunk).not.toContain('__FOOTFALL_');
    expect(sharedBundling().commandHooks).toBeUndefined();
  });

  it('the filtered bundle loads without it, and the chunk loads from beside it (DuckDB at the first filtered call)', () => {
    const report = join(dir, 'filtered');
    const chunk = join(report, DUCKDB_CHUNK.file);
    const env = { ...process.env, TABLE_NAME: 't', AWS_REGION: 'us-east-1', VISIT_TABLE_BUCKET: 'b' };
    const load = (file: string, then = '') =>
      execFileSync(
        process.execPath,
        ['--input-type=module', '-e', `const m = await import(${JSON.stringify(file)}); ${then}`],
        { env, encoding: 'utf8' },
      );
    renameSync(chunk, `${chunk}.away`);
    try {
      load(join(report, 'index.mjs'), 'console.log(typeof m.handler)');
    } finally {
      renameSync(`${chunk}.away`, chunk);
    }
    expect(existsSync(chunk)).toBe(true);
    // What the entry's `import("./duckdb.mjs")` resolves to: the wiring of the filtered engine.
    writeFileSync(join(report, 'probe.mjs'), `export const deps = await import('./${DUCKDB_CHUNK.file}');`);
    expect(load(join(report, 'probe.mjs'), 'console.log(Object.keys(m.deps).sort().join())').trim()).toBe(
      's3ArchiveCopies,s3FilteredVisits,s3VisitTable',
    );
  });
});
