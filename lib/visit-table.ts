import { DockerImage, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_FAMILIES, VISIT_TABLE_PREFIX, VISIT_TABLE_TMP_MIB } from '../lambdas/adapters/s3-table-files.js';
import { DUCKDB_BINDING, duckdbBinding } from './duckdb-binding.js';
import { RUNTIME } from './lambda-defaults.js';

/**
 * The functions that run DuckDB (`FunctionSpec.visitTable`: the operations function writes the visit
 * table, the report and MCP functions read it) run on x86_64: DuckDB's native library is the npm
 * package `@duckdb/node-bindings-linux-x64`, which `npm ci` installs on Linux x64 (so CI and a Linux
 * deployer synthesize offline) and `duckdbBinding` otherwise fetches at synth. x86_64's GB-second
 * costs a quarter more (`docs/cost.md`, "Filtered reports"), but it is the platform this machine and
 * CI install and test.
 */
export const DUCKDB_ARCHITECTURE = lambda.Architecture.X86_64;
/** Lambda's ephemeral storage of those functions, where the table's files are copied. */
export const VISIT_TABLE_EPHEMERAL = Size.mebibytes(VISIT_TABLE_TMP_MIB);

/**
 * DuckDB's native library as a Lambda layer: `nodejs/node_modules/@duckdb/node-bindings-linux-x64/`
 * (its `duckdb.node`, the `libduckdb.so` it loads from its own directory, manifest and licence), which Lambda extracts under `/opt` and Node resolves
 * through `NODE_PATH` (`/opt/nodejs/node_modules`) when the bundled `@duckdb/node-bindings` requires
 * it; the bundles leave that package external (`bench/bundle.ts`). Copied at synth from where
 * `duckdbBinding` found it (no Docker), named by the version so an unchanged library is not staged again.
 * About 68 MB unzipped, within Lambda's 250 MB of function and layers.
 */
export function duckdbLayer(scope: Construct): lambda.LayerVersion {
  const { dir, version } = duckdbBinding();
  const files = ['package.json', 'duckdb.node', 'libduckdb.so', 'LICENSE'].filter((f) => existsSync(join(dir, f)));
  return new lambda.LayerVersion(scope, 'DuckDb', {
    code: lambda.Code.fromAsset(dir, {
      assetHash: `${DUCKDB_BINDING}@${version}`,
      bundling: {
        // Never run: the local copy below always succeeds.
        image: DockerImage.fromRegistry('scratch'),
        local: {
          tryBundle(outputDir) {
            const target = join(outputDir, 'nodejs', 'node_modules', DUCKDB_BINDING);
            mkdirSync(target, { recursive: true });
            for (const f of files) copyFileSync(join(dir, f), join(target, f));
            return true;
          },
        },
      },
    }),
    compatibleRuntimes: [RUNTIME],
    compatibleArchitectures: [DUCKDB_ARCHITECTURE],
    description: `Footfall: DuckDB's native library for Node (${DUCKDB_BINDING} ${version}), for filtered reports`,
    removalPolicy: RemovalPolicy.DESTROY,
  });
}

/**
 * Grants a function the visit table under `VISIT_TABLE_PREFIX` of the archive bucket, and sets
 * `VISIT_TABLE_BUCKET`: `read` (report, MCP) lists and gets the visits, payments and dictionary
 * files; `write` (operations) also the writer's state, and puts and deletes them. Listing only
 * under those prefixes (`s3:prefix`); nothing else of the bucket (`S3TableFiles`).
 */
export function grantVisitTable(
  fn: lambda.Function,
  role: iam.IRole,
  bucket: s3.IBucket,
  access: keyof typeof TABLE_FAMILIES,
): void {
  fn.addEnvironment('VISIT_TABLE_BUCKET', bucket.bucketName);
  const prefixes = TABLE_FAMILIES[access].map((family) => `${VISIT_TABLE_PREFIX}${family}/`);
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: access === 'write' ? ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] : ['s3:GetObject'],
      resources: prefixes.map((p) => bucket.arnForObjects(`${p}*`)),
    }),
  );
  const id = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  for (const p of prefixes)
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${id}.Arn>/${p}*]`,
      reason:
        'The visit table\'s files are named by site and month (visit-table/<family>/site=<domain>/mo=<YYYY-MM>/), unknown at deploy: the wildcard is one family of this stack\'s visit table (docs/data-model.md, "Filtered reports").',
    });
}
