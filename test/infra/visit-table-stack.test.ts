import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import { VISIT_TABLE_TMP_MIB } from '../../lambdas/adapters/s3-table-files.js';
import { DUCKDB_BINDING } from '../../lib/duckdb-binding.js';
import { duckdbLayer } from '../../lib/visit-table.js';
import { synth, testApp, type Synthesized } from './synth.js';

/**
 * Filtered reports in the stack (`docs/data-model.md`, "Filtered reports"): the functions that run DuckDB
 * (the filtered function reads the visit table, operations writes it) on x86_64 with the DuckDB layer, `/tmp`
 * for the table's files and grants on `visit-table/` only; the report and MCP functions stay arm64 at 512 MB
 * and may invoke the filtered function and nothing else of Lambda; `-c filteredReports=false` (the default)
 * has no filtered function and leaves them as before.
 */

type Resource = { Properties: Record<string, unknown> };
const functions = (s: Synthesized) =>
  Object.entries(s.template.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(
    ([, fn]) => (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables,
  );
const serviceOf = (fn: Resource) =>
  String((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_SERVICE_NAME);
/** The statements of a function's policies (`service` in the registry). */
function statementsOf(s: Synthesized, service: string) {
  const role = Object.keys(s.template.findResources('AWS::IAM::Role')).find((id) => id.startsWith(`${service}Role`));
  return Object.values(s.template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement);
}
/** The Lambda statements of a function's policies, resources as the logical ids of the functions they name. */
const lambdaStatements = (s: Synthesized, service: string) =>
  statementsOf(s, service)
    .filter((st) => [st.Action].flat().some((a) => String(a).startsWith('lambda:')))
    .map((st) => ({
      Action: st.Action,
      Resource: [st.Resource].flat().map((r) => JSON.stringify(r).match(/"([A-Za-z0-9]+)","Arn"/)?.[1] ?? r),
    }));
/** The logical id of the function of `service`. */
const functionId = (s: Synthesized, service: string) => functions(s).find(([, fn]) => serviceOf(fn) === service)?.[0];

/** The S3 statements of a function's policies, resources flattened to their key pattern (`visit-table/…`). */
function s3Statements(s: Synthesized, service: string) {
  const role = Object.keys(s.template.findResources('AWS::IAM::Role')).find((id) => id.startsWith(`${service}Role`));
  return Object.values(s.template.findResources('AWS::IAM::Policy') as Record<string, Resource>)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement)
    .filter((st) => [st.Action].flat().some((a) => String(a).startsWith('s3:')))
    .filter((st) => JSON.stringify(st).includes('visit-table'))
    .map((st) => ({
      Action: st.Action,
      Resource: [st.Resource]
        .flat()
        .map((r) => JSON.stringify(r).match(/"\/([^"]*)"\]\]\}$/)?.[1] ?? 'bucket')
        .sort(),
      ...(st.Condition ? { Condition: st.Condition } : {}),
    }));
}

describe('filtered reports in the stack', () => {
  let on: Synthesized;
  let off: Synthesized;
  beforeAll(async () => {
    await ensureAppBuilt(() => {});
    on = synth({ config: { app: true, filteredReports: true }, bundle: false });
    off = synth({ config: { app: true }, bundle: false });
  }, 240_000);

  it('puts the filtered function and operations on x86_64 with the DuckDB layer, /tmp and the bucket; the others, report and MCP included, stay arm64 without it', () => {
    const layers = Object.keys(on.template.findResources('AWS::Lambda::LayerVersion'));
    const duckdb = layers.filter((id) => id.startsWith('DuckDb'));
    expect(duckdb).toHaveLength(1);
    on.template.hasResourceProperties('AWS::Lambda::LayerVersion', {
      CompatibleArchitectures: ['x86_64'],
      CompatibleRuntimes: ['nodejs22.x'],
    });
    const seen: Record<string, unknown> = {};
    for (const [, fn] of functions(on)) {
      const p = fn.Properties;
      const variables = (p.Environment as { Variables: Record<string, unknown> }).Variables;
      seen[serviceOf(fn)] = {
        arch: p.Architectures,
        duckdb: JSON.stringify(p.Layers ?? []).includes(duckdb[0]!),
        tmp: (p.EphemeralStorage as { Size: number } | undefined)?.Size ?? 512,
        memory: p.MemorySize,
        timeout: p.Timeout,
        bucket: variables.VISIT_TABLE_BUCKET === undefined ? null : JSON.stringify(variables.VISIT_TABLE_BUCKET),
        filteredFlag: variables.FILTERED_REPORTS ?? null,
      };
    }
    const uses = {
      arch: ['x86_64'],
      duckdb: true,
      tmp: VISIT_TABLE_TMP_MIB,
      memory: 1769,
      bucket: expect.stringMatching(/ArchiveEvents/),
    };
    expect(seen).toMatchObject({
      filtered: { ...uses, timeout: 29 },
      operations: { ...uses, timeout: 900 },
    });
    // Unfiltered reports keep their 512 MB arm64; they wait for the filtered function up to its timeout.
    const caller = { arch: ['arm64'], duckdb: false, tmp: 512, memory: 512, timeout: 29, bucket: null };
    expect(seen).toMatchObject({ report: caller, mcp: caller });
    for (const [service, props] of Object.entries(seen))
      if (!['filtered', 'operations'].includes(service))
        expect(props, service).toMatchObject({ arch: ['arm64'], duckdb: false, tmp: 512, bucket: null });
    // The app function is told, so the app offers filters and properties (lambdas/entry/app.ts `capabilities`); no other.
    for (const [service, props] of Object.entries(seen))
      expect((props as { filteredFlag: unknown }).filteredFlag, service).toBe(service === 'app' ? 'true' : null);
  });

  it('grants the readers list and get on the visits, payments and dictionary only, and the writer its state, puts and deletes', () => {
    const read = [
      {
        Action: 's3:ListBucket',
        Resource: ['bucket'],
        Condition: {
          StringLike: { 's3:prefix': ['visit-table/visits/*', 'visit-table/payments/*', 'visit-table/dict/*'] },
        },
      },
      {
        Action: 's3:GetObject',
        Resource: ['visit-table/dict/*', 'visit-table/payments/*', 'visit-table/visits/*'],
      },
    ];
    expect(s3Statements(on, 'filtered')).toEqual(read);
    expect(s3Statements(on, 'report')).toEqual([]);
    expect(s3Statements(on, 'mcp')).toEqual([]);
    const families = ['visits', 'payments', 'dict', 'state'].map((f) => `visit-table/${f}/*`);
    expect(s3Statements(on, 'operations')).toEqual([
      { Action: 's3:ListBucket', Resource: ['bucket'], Condition: { StringLike: { 's3:prefix': families } } },
      { Action: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'], Resource: [...families].sort() },
    ]);
  });

  it('lets the report and MCP functions invoke the filtered and operations functions and nothing else of Lambda, naming them', () => {
    const filtered = functionId(on, 'filtered');
    const operations = functionId(on, 'operations');
    expect(filtered).toBeDefined();
    for (const service of ['report', 'mcp']) {
      expect(lambdaStatements(on, service), service).toEqual([
        { Action: 'lambda:InvokeFunction', Resource: [filtered, operations] },
      ]);
      const [, fn] = functions(on).find(([, f]) => serviceOf(f) === service)!;
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(variables.FILTERED_FUNCTION), service).toContain(filtered);
      // A look at an idle site asks the operations function for a refresh (`TableLooks`).
      expect(JSON.stringify(variables.OPERATIONS_FUNCTION), service).toContain(operations);
      // Their look write: UpdateItem of a LOOK item's looked, wanted and TTL, returning nothing.
      const looks = statementsOf(on, service).filter((st) => JSON.stringify(st.Condition ?? {}).includes('"LOOKS"'));
      expect(looks.find((st) => st.Action === 'dynamodb:UpdateItem')?.Condition, service).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LOOKS'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'looked', 'wanted', 'expires_at'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      });
    }
    // Nobody else may invoke the filtered function, and it invokes nothing.
    for (const [, fn] of functions(on)) {
      const service = serviceOf(fn);
      if (['report', 'mcp'].includes(service)) continue;
      expect(JSON.stringify(lambdaStatements(on, service)), service).not.toContain(filtered);
    }
    expect(lambdaStatements(on, 'filtered')).toEqual([]);
    // A refresh asked for while a run holds the operations function waits in Lambda's queue one schedule at most.
    on.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumEventAgeInSeconds: 900 });
  });

  it('has no unacknowledged cdk-nag finding', () => {
    expect(on.nagViolations()).toEqual([]);
  });

  it('by default (-c filteredReports=false): no layer, no bucket, no grant, every function on arm64 at its own memory', () => {
    expect(
      Object.keys(off.template.findResources('AWS::Lambda::LayerVersion')).filter((id) => id.startsWith('DuckDb')),
    ).toEqual([]);
    for (const [, fn] of functions(off)) {
      expect(fn.Properties.Architectures, serviceOf(fn)).toEqual(['arm64']);
      expect(JSON.stringify(fn.Properties.Environment)).not.toContain('VISIT_TABLE_BUCKET');
      // Without it the app function is not told, so the app offers no filter (lambdas/entry/app.ts).
      expect(JSON.stringify(fn.Properties.Environment), serviceOf(fn)).not.toContain('FILTERED_REPORTS');
    }
    for (const service of ['report', 'mcp', 'operations']) expect(s3Statements(off, service)).toEqual([]);
    // No filtered function, no grant to invoke one, and the report and MCP functions at their default timeout.
    expect(functionId(off, 'filtered')).toBeUndefined();
    for (const service of ['report', 'mcp']) {
      expect(lambdaStatements(off, service), service).toEqual([]);
      const [, fn] = functions(off).find(([, f]) => serviceOf(f) === service)!;
      expect(JSON.stringify(fn.Properties.Environment), service).not.toContain('FILTERED_FUNCTION');
      expect(JSON.stringify(fn.Properties.Environment), service).not.toContain('OPERATIONS_FUNCTION');
      // No look is written: no UpdateItem on LOOKS.
      const updates = statementsOf(off, service).filter((st) => st.Action === 'dynamodb:UpdateItem');
      expect(JSON.stringify(updates), service).not.toContain('LOOKS');
      expect(fn.Properties.Timeout, service).not.toBe(29);
    }
  });
});

describe('the DuckDB layer', () => {
  it("stages the installed binding's library where Node resolves it under /opt, within Lambda's 250 MB", () => {
    // Bundling on (the local copy): what `cdk deploy` zips.
    const app: App = testApp({ builtinCloudFormationValidation: false });
    const stack = new Stack(app, 'Layer');
    duckdbLayer(stack);
    const layer = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::LayerVersion'))[0] as Resource;
    const key = (layer.Properties.Content as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    const dir = join(app.outdir, `asset.${key}`, 'nodejs', 'node_modules', DUCKDB_BINDING);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['LICENSE', 'duckdb.node', 'libduckdb.so', 'package.json']);
    const bytes = files.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(bytes).toBeLessThan(250 * 1024 * 1024);
    console.log(`DuckDB layer: ${(bytes / 1024 / 1024).toFixed(1)} MiB unzipped`);
  });
});
