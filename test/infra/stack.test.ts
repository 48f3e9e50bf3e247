import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { builtinModules } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVE_PARTITION_KEYS, archiveDt, glueColumns } from '../../lambdas/domain/archive-schema.js';
import { FIREHOSE_PREFIX, PARTITION_QUERIES } from '../../lib/archive.js';
import { FUNCTIONS, deployedFunctions, type FunctionSpec } from '../../lib/functions.js';
import { ACCESS_LOG_FIELDS } from '../../lib/http-api.js';
import { ensureAppBuilt } from '../../app/build.js';
import { NAMED_QUERIES } from '../../sql/named-queries.js';
import { buildTrackerSync } from '../../tracker/build.js';
import { acknowledgments, synth, type Synthesized } from './synth.js';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

/**
 * The template's resources of `type`, without CDK's deploy-time bucket-notifications helper (its
 * function and role configure the raw objects' S3 notification, `lib/lambda-defaults.ts`
 * consumeDelivery; cdk-nag's finding on it is acknowledged in `lib/footfall-stack.ts`).
 */
const resourcesOf = (s: Synthesized, type: string): Record<string, Resource> =>
  Object.fromEntries(
    Object.entries(s.template.findResources(type) as Record<string, Resource>).filter(
      ([id]) => !id.startsWith('BucketNotificationsHandler'),
    ),
  );
const only = <T>(values: Record<string, T>): T => {
  const all = Object.values(values);
  expect(all).toHaveLength(1);
  return all[0] as T;
};
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

let main: Synthesized;
/** Every non-default setting at once, without bundling (wiring only). */
let variant: Synthesized;

beforeAll(() => {
  main = synth({ validate: true }); // the real thing: defaults, esbuild bundling of every function, validated
  variant = synth({
    config: {
      drainStream: true,
      shards: 3,
      throttleRate: 50,
      throttleBurst: 100,
      rawRetentionDays: 0,
      deletionProtection: false,
      hotPathTracing: true,
      pointInTimeRecovery: false,
      tableClass: 'standard',
      hotPathConcurrency: 50,
    },
    bundle: false,
  });
});

describe('the stack as deployed by default', () => {
  it('bundles every function with esbuild: ESM with the require banner, the tracker inlined, only the runtime SDK external', () => {
    const functions = resourcesOf(main, 'AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(deployedFunctions(FUNCTIONS, { app: false }).length);
    const outdir = (main.stack.node.root as App).outdir;
    for (const [id, fn] of Object.entries(functions)) {
      const key = (fn.Properties.Code as { S3Key: string }).S3Key;
      const code = readFileSync(join(outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire as __cr } from 'node:module';"), id).toBe(true);
      expect(code, id).not.toContain('__FOOTFALL_TRACKER__');
      // Static ESM imports (`import{a as b}from"x"`, `import"x"`) of packages, not of node: builtins.
      const bare = [...code.matchAll(/\bimport\s*(?:[\w$*{}\s,]+?from\s*)?"([^"]+)"/g)]
        .map((m) => m[1] ?? '')
        .filter((m) => /^[@a-z0-9][\w@./-]*$/i.test(m) && !m.startsWith('node:') && !builtinModules.includes(m));
      expect(
        bare.filter((m) => !m.startsWith('@aws-sdk/')),
        id,
      ).toEqual([]);
    }
    const tracker = Object.entries(functions).find(([id]) => id.startsWith('tracker'))?.[1];
    const key = (tracker?.Properties.Code as { S3Key: string }).S3Key;
    const code = readFileSync(join(outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs'), 'utf8');
    expect(code.length).toBeGreaterThan(buildTrackerSync().length);
  });

  it('has no unacknowledged cdk-nag AWS Solutions finding', () => {
    expect(main.nagViolations()).toEqual([]);
  });

  it('gives every acknowledged finding a specific reason', () => {
    const acks = acknowledgments(main.stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThan(60);
    }
  });
});

describe('Lambda functions', () => {
  it('run nodejs22.x on arm64, each with its own log group', () => {
    const functions = resourcesOf(main, 'AWS::Lambda::Function');
    const logGroups = resourcesOf(main, 'AWS::Logs::LogGroup');
    for (const [id, fn] of Object.entries(functions)) {
      expect(fn.Properties, id).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Environment: {
          Variables: { POWERTOOLS_METRICS_NAMESPACE: 'Footfall', POWERTOOLS_SERVICE_NAME: expect.any(String) },
        },
      });
      const logGroup = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(logGroups[logGroup]?.Properties.RetentionInDays, id).toBe(30);
    }
  });

  /** Tracing mode and logging of each deployed function, by its registry name (`POWERTOOLS_SERVICE_NAME`). */
  type Mode = { tracing?: string; LogFormat: unknown; SystemLogLevel: unknown; ApplicationLogLevel: unknown };
  const tracingOf = (s: Synthesized): Record<string, Mode> =>
    Object.fromEntries(
      Object.values(resourcesOf(s, 'AWS::Lambda::Function')).map((fn) => {
        const { Variables } = fn.Properties.Environment as { Variables: Record<string, string> };
        const { LogFormat, SystemLogLevel, ApplicationLogLevel } = fn.Properties.LoggingConfig as Record<
          string,
          unknown
        >;
        return [
          Variables.POWERTOOLS_SERVICE_NAME,
          {
            tracing: (fn.Properties.TracingConfig as { Mode: string } | undefined)?.Mode,
            LogFormat,
            SystemLogLevel,
            ApplicationLogLevel,
          },
        ];
      }),
    );
  const hotPath = Object.entries(FUNCTIONS)
    .filter(([, spec]) => (spec as FunctionSpec).hotPath)
    .map(([name]) => name);

  it("trace nothing and drop Lambda's platform log lines on the hot path by default; trace every other function", () => {
    expect(hotPath.sort()).toEqual(['event', 'tracker']);
    for (const [name, mode] of Object.entries(tracingOf(main))) {
      if (hotPath.includes(name)) {
        // PassThrough: only a caller's sampled trace header would be traced, and HTTP APIs send none.
        expect(mode, name).toEqual({
          tracing: 'PassThrough',
          LogFormat: 'JSON',
          SystemLogLevel: 'WARN',
          ApplicationLogLevel: undefined,
        });
      } else {
        expect(mode, name).toEqual({
          tracing: 'Active',
          LogFormat: undefined,
          SystemLogLevel: undefined,
          ApplicationLogLevel: undefined,
        });
      }
    }
  });

  it('traces the hot path actively with hotPathTracing=true', () => {
    for (const [name, mode] of Object.entries(tracingOf(variant))) expect(mode.tracing, name).toBe('Active');
  });

  it('give the event function 256 MB (its requests wait on Firehose; docs/cost.md) and the sessionizer 1024 MB', () => {
    const memory = Object.fromEntries(
      Object.values(resourcesOf(main, 'AWS::Lambda::Function')).map((fn) => [
        (fn.Properties.Environment as { Variables: Record<string, string> }).Variables.POWERTOOLS_SERVICE_NAME,
        fn.Properties.MemorySize,
      ]),
    );
    expect(memory).toMatchObject({ event: 256, tracker: 256, sessionize: 1024 });
  });

  it('bind the table, the delivery streams and the raw objects by environment', () => {
    main.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('POST /api/event'),
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: Match.anyValue() },
          INGEST_STREAM: { Ref: Match.stringLikeRegexp('^IngestDelivery') },
          ARCHIVE_STREAM: Match.absent(),
        },
      },
    });
    main.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('Sessionizer'),
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: Match.anyValue() },
          RAW_BUCKET: { Ref: Match.stringLikeRegexp('^ArchiveEvents') },
          // The sessionizer feeds the archive (docs/ingestion.md, "Archive packed").
          ARCHIVE_STREAM: { Ref: Match.stringLikeRegexp('^ArchiveDirectDelivery') },
        },
      },
      Timeout: 60,
      ReservedConcurrentExecutions: 1,
    });
  });

  it('use roles without AWS managed policies', () => {
    for (const [id, role] of Object.entries(resourcesOf(main, 'AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
    }
  });
});

describe('IAM', () => {
  it('has no "*" or "service:*" action, and "*" resources only where the service has no resource ARNs', () => {
    const policies = resourcesOf(main, 'AWS::IAM::Policy');
    expect(Object.keys(policies).length).toBeGreaterThan(0);
    for (const [id, policy] of Object.entries(policies)) {
      const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      for (const statement of statements) {
        const actions = asArray(statement.Action);
        for (const action of actions) {
          expect(action, id).not.toBe('*');
          expect(action, id).not.toMatch(/^[a-z0-9-]+:\*$/);
        }
        if (statement.Resource === '*') {
          // X-Ray (active tracing) and the Glue schema registry lookup of the Firehose L2.
          expect(
            actions.every((a) => a.startsWith('xray:') || a === 'glue:GetSchemaVersion'),
            `${id}: ${actions.join(', ')}`,
          ).toBe(true);
        }
      }
    }
  });

  it('grants the functions only the DynamoDB item API and the Firehose call they make', () => {
    const policies = resourcesOf(main, 'AWS::IAM::Policy');
    const eventPolicy = Object.entries(policies).find(([id]) => id.startsWith('eventRole'))?.[1];
    const actions = (eventPolicy?.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap((s) =>
      asArray(s.Action),
    );
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(actions.filter((a) => /^(kinesis|firehose|s3):/.test(a)).sort()).toEqual(['firehose:PutRecordBatch']);
    const sessionizePolicy = Object.entries(policies).find(([id]) => id.startsWith('sessionizeRole'))?.[1];
    const statements = (sessionizePolicy?.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(statements.flatMap((st) => asArray(st.Action)).filter((a) => /^(kinesis|firehose|s3):/.test(a))).toEqual([
      's3:GetObject',
      's3:ListBucket',
      'firehose:PutRecordBatch',
    ]);
    // Each function puts to its one delivery: the event function to the ingest, the sessionizer to the archive.
    const putsTo = (st: Statement[]) =>
      st.filter((s) => asArray(s.Action).includes('firehose:PutRecordBatch')).flatMap((s) => asArray(s.Resource));
    const eventStatements = (eventPolicy?.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(JSON.stringify(putsTo(eventStatements))).toMatch(/^\[\{"Fn::GetAtt":\["IngestDelivery[^"]*","Arn"\]\}\]$/);
    expect(JSON.stringify(putsTo(statements))).toMatch(/^\[\{"Fn::GetAtt":\["ArchiveDirectDelivery[^"]*","Arn"\]\}\]$/);
  });
});

describe('HTTP API', () => {
  it("routes the ingestion, tracker and health endpoints, and exactly the registry's routes", () => {
    const keys = Object.values(resourcesOf(main, 'AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties.RouteKey as string,
    );
    expect(keys).toEqual(expect.arrayContaining(['GET /health', 'GET /v.js', 'ANY /api/event']));
    const fromRegistry = deployedFunctions(FUNCTIONS, { app: false }).flatMap(([, spec]) =>
      (spec.routes ?? []).flatMap((route) => route.methods.map((method) => `${method} ${route.path}`)),
    );
    expect(keys.sort()).toEqual(fromRegistry.sort());
  });

  it('throttles the $default stage and writes JSON access logs without IP addresses', () => {
    const stage = only(resourcesOf(main, 'AWS::ApiGatewayV2::Stage'));
    expect(stage.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
    });
    const settings = stage.Properties.AccessLogSettings as { Format: string; DestinationArn: unknown };
    expect(JSON.parse(settings.Format)).toEqual(ACCESS_LOG_FIELDS);
    expect(settings.Format).not.toMatch(/sourceIp|userAgent/);
    // A line per tracked event, billed by the byte: with every value 16 characters long it stays under
    // 190 bytes (the ten long-named fields it replaced took 336).
    expect(settings.Format.replace(/\$context\.[\w.]+/g, 'x'.repeat(16)).length).toBeLessThan(190);
    expect(settings.DestinationArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^HttpAccessLogs/), 'Arn'] });
  });

  it('throttles by context', () => {
    variant.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });
});

describe('ingestion without a stream (docs/ingestion.md, "Choosing the ingestion path")', () => {
  it('has no Kinesis stream and no event source mapping by default', () => {
    main.template.resourceCountIs('AWS::Kinesis::Stream', 0);
    main.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 0);
  });

  it('delivers raw JSON lines by Direct PUT to raw/ every 60 s, encrypted, with its own error prefix', () => {
    main.template.hasResourceProperties('AWS::KinesisFirehose::DeliveryStream', {
      DeliveryStreamType: 'DirectPut',
      DeliveryStreamEncryptionConfigurationInput: { KeyType: 'AWS_OWNED_CMK' },
      ExtendedS3DestinationConfiguration: {
        Prefix: 'raw/!{timestamp:yyyy/MM/dd/HH}/',
        ErrorOutputPrefix: Match.stringLikeRegexp('^errors/raw/'),
        BufferingHints: { SizeInMBs: 64, IntervalInSeconds: 60 },
        DataFormatConversionConfiguration: Match.absent(),
        DynamicPartitioningConfiguration: Match.absent(),
      },
    });
  });

  it('invokes the sessionizer on raw/ objects, asynchronously, retried twice for 6 hours, failures to its encrypted queue, and sweeps every 15 minutes', () => {
    const notifications = only(resourcesOf(main, 'Custom::S3BucketNotifications'));
    expect(notifications.Properties.NotificationConfiguration).toMatchObject({
      LambdaFunctionConfigurations: [
        {
          Events: ['s3:ObjectCreated:*'],
          Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'raw/' }] } },
          LambdaFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^sessionize/), 'Arn'] },
        },
      ],
    });
    const queues = resourcesOf(main, 'AWS::SQS::Queue');
    const [queueId, queue] = Object.entries(queues)[0] ?? [];
    expect(Object.keys(queues)).toHaveLength(1);
    expect(queue?.Properties.SqsManagedSseEnabled).toBe(true);
    main.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: Match.stringLikeRegexp('^sessionize') },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 21_600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    main.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^sessionize'), 'Arn'] } })],
    });
  });

  it('keeps the stream, its windowed mapping and its archive delivery with drainStream=true (the upgrade)', () => {
    variant.template.hasResourceProperties('AWS::Kinesis::Stream', {
      StreamModeDetails: { StreamMode: 'PROVISIONED' },
      ShardCount: 3,
      StreamEncryption: { EncryptionType: 'KMS' },
    });
    variant.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Events'), 'Arn'] },
      FunctionName: { Ref: Match.stringLikeRegexp('^sessionize') },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 2000,
      MaximumBatchingWindowInSeconds: 60,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    variant.template.hasResourceProperties('AWS::KinesisFirehose::DeliveryStream', {
      DeliveryStreamType: 'KinesisStreamAsSource',
      KinesisStreamSourceConfiguration: {
        KinesisStreamARN: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Events'), 'Arn'] },
      },
    });
    // The stack on the stream had these logical ids: the upgrade keeps its stream and delivery stream.
    expect(Object.keys(resourcesOf(variant, 'AWS::Kinesis::Stream'))[0]).toMatch(/^Events[0-9A-F]{8}$/);
    expect(Object.keys(resourcesOf(variant, 'AWS::KinesisFirehose::DeliveryStream'))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ArchiveDelivery[0-9A-F]{8}$/)]),
    );
  });
});

describe('Firehose to the Parquet archive', () => {
  const delivery = () =>
    only(
      Object.fromEntries(
        Object.entries(resourcesOf(main, 'AWS::KinesisFirehose::DeliveryStream')).filter(([id]) =>
          id.startsWith('ArchiveDirectDelivery'),
        ),
      ),
    );

  it('takes Direct PUT and converts OpenX JSON to Parquet against the Glue table', () => {
    main.template.hasResourceProperties('AWS::KinesisFirehose::DeliveryStream', {
      DeliveryStreamType: 'DirectPut',
      ExtendedS3DestinationConfiguration: {
        DataFormatConversionConfiguration: {
          Enabled: true,
          InputFormatConfiguration: { Deserializer: { OpenXJsonSerDe: {} } },
          OutputFormatConfiguration: { Serializer: { ParquetSerDe: { Compression: 'SNAPPY' } } },
          SchemaConfiguration: {
            DatabaseName: 'footfall',
            TableName: { Ref: Match.stringLikeRegexp('^ArchiveTable') },
            VersionId: 'LATEST',
          },
        },
      },
    });
  });

  it('partitions dynamically by site and UTC date, with an error prefix and the largest buffer Firehose allows (128 MiB, 15 minutes: fewest objects)', () => {
    const config = delivery().Properties.ExtendedS3DestinationConfiguration as {
      DynamicPartitioningConfiguration: unknown;
      Prefix: string;
      ErrorOutputPrefix: string;
      BufferingHints: { SizeInMBs: number; IntervalInSeconds: number };
      ProcessingConfiguration: {
        Processors: Array<{ Type: string; Parameters: Array<{ ParameterName: string; ParameterValue: string }> }>;
      };
    };
    expect(config.DynamicPartitioningConfiguration).toEqual({ Enabled: true });
    expect(config.Prefix).toBe('events/site=!{partitionKeyFromQuery:site}/dt=!{partitionKeyFromQuery:dt}/');
    expect(config.Prefix).toBe(FIREHOSE_PREFIX);
    expect(config.ErrorOutputPrefix).toMatch(/^errors\/!\{firehose:error-output-type\}\//);
    // Parquet conversion needs ≥ 64 MiB and dynamic partitioning ≥ 60 s; BufferingHints allows at most 128 MiB and 900 s.
    expect(config.BufferingHints).toEqual({ SizeInMBs: 128, IntervalInSeconds: 900 });
    // The sessionizer's JSON-lines records are split into one event each before the partition keys are read.
    expect(config.ProcessingConfiguration.Processors.map((p) => p.Type)).toEqual([
      'RecordDeAggregation',
      'MetadataExtraction',
    ]);
    expect(config.ProcessingConfiguration.Processors[0]?.Parameters).toEqual([
      { ParameterName: 'SubRecordType', ParameterValue: 'JSON' },
    ]);
    const processor = config.ProcessingConfiguration.Processors.find((p) => p.Type === 'MetadataExtraction');
    const params = Object.fromEntries((processor?.Parameters ?? []).map((p) => [p.ParameterName, p.ParameterValue]));
    expect(params).toEqual({
      JsonParsingEngine: 'JQ-1.6',
      MetadataExtractionQuery: `{"site":${PARTITION_QUERIES.site},"dt":${PARTITION_QUERIES.dt}}`,
    });
  });

  const jq = (() => {
    try {
      return execFileSync('jq', ['--version'], { encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  })();

  it.skipIf(jq !== 'jq-1.6')(
    'computes dt as archiveDt does (the query run through jq 1.6, the engine Firehose uses)',
    () => {
      const config = delivery().Properties.ExtendedS3DestinationConfiguration as {
        ProcessingConfiguration: {
          Processors: Array<{ Parameters: Array<{ ParameterName: string; ParameterValue: string }> }>;
        };
      };
      const query = config.ProcessingConfiguration.Processors[1]?.Parameters.find(
        (p) => p.ParameterName === 'MetadataExtractionQuery',
      )?.ParameterValue;
      const times = [
        0,
        Date.UTC(2026, 0, 14, 23, 59, 59, 999),
        Date.UTC(2026, 0, 15),
        Date.UTC(2024, 1, 29, 12, 30, 1, 1),
      ];
      for (const ts of times) {
        const out = execFileSync('jq', ['-c', query ?? ''], {
          input: JSON.stringify({ site: 'example.com', ts, type: 'pageview' }),
          encoding: 'utf8',
        });
        expect(JSON.parse(out)).toEqual({ site: 'example.com', dt: archiveDt(ts) });
      }
    },
  );
});

describe('Glue table and Athena', () => {
  it('has exactly the columns of glueColumns(), partitioned by site and dt', () => {
    const table = only(resourcesOf(main, 'AWS::Glue::Table'));
    const input = table.Properties.TableInput as {
      Name: string;
      PartitionKeys: Array<{ Name: string; Type: string }>;
      StorageDescriptor: {
        Columns: Array<{ Name: string; Type: string }>;
        InputFormat: string;
        OutputFormat: string;
        SerdeInfo: { SerializationLibrary: string };
      };
    };
    expect(input.Name).toBe('events');
    expect(input.StorageDescriptor.Columns).toEqual(
      glueColumns().map(({ name, type }) => ({ Name: name, Type: type })),
    );
    expect(input.PartitionKeys).toEqual(ARCHIVE_PARTITION_KEYS.map(({ name, type }) => ({ Name: name, Type: type })));
    expect(input.StorageDescriptor).toMatchObject({
      InputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
      OutputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
      SerdeInfo: { SerializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
    });
  });

  it('projects partitions (no crawler) onto the Firehose layout', () => {
    main.template.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: 'footfall',
      TableInput: {
        Parameters: Match.objectLike({
          'projection.enabled': 'true',
          'projection.site.type': 'injected',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': '2024-01-01,NOW',
          'storage.location.template': {
            'Fn::Join': [
              '',
              ['s3://', { Ref: Match.stringLikeRegexp('^ArchiveEvents') }, '/events/site=${site}/dt=${dt}/'],
            ],
          },
        }),
      },
    });
    expect(resourcesOf(main, 'AWS::Glue::Crawler')).toEqual({});
  });

  it('has an Athena workgroup that enforces encrypted results in its own bucket', () => {
    main.template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'footfall',
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        ResultConfiguration: {
          EncryptionConfiguration: { EncryptionOption: 'SSE_S3' },
          OutputLocation: {
            'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^ArchiveAthenaResults') }, '/results/']],
          },
        },
      },
    });
  });

  it('ships one named query per NAMED_QUERIES entry', () => {
    const queries = Object.values(resourcesOf(main, 'AWS::Athena::NamedQuery')).map((q) => q.Properties);
    expect(queries.map((q) => q.Name).sort()).toEqual(NAMED_QUERIES.map((q) => q.name).sort());
    for (const named of NAMED_QUERIES) {
      expect(queries.find((q) => q.Name === named.name)).toMatchObject({
        QueryString: named.sql,
        Description: named.description,
        Database: 'footfall',
        WorkGroup: { Ref: expect.stringMatching(/^ArchiveWorkGroup/) },
      });
    }
  });
});

describe('S3', () => {
  it('encrypts every bucket, blocks public access and denies requests without TLS', () => {
    const buckets = resourcesOf(main, 'AWS::S3::Bucket');
    const policies = Object.values(resourcesOf(main, 'AWS::S3::BucketPolicy'));
    expect(Object.keys(buckets)).toHaveLength(3);
    for (const [id, bucket] of Object.entries(buckets)) {
      expect(bucket.Properties, id).toMatchObject({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      });
      expect(bucket.DeletionPolicy, id).toBe('Retain');
      const policy = policies.find((p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: id }));
      const statements = (policy?.Properties.PolicyDocument as { Statement: Statement[] } | undefined)?.Statement ?? [];
      expect(
        statements.some(
          (s) =>
            s.Effect === 'Deny' &&
            JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
        ),
        id,
      ).toBe(true);
    }
  });

  it('keeps raw events rawRetentionDays (730 by default) and Athena results 30 days', () => {
    main.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'events/', ExpirationInDays: 730, Status: 'Enabled' })]),
      },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: { Ref: Match.stringLikeRegexp('^AccessLogs') } }),
    });
    main.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 30, Status: 'Enabled' })]),
      },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: { Ref: Match.stringLikeRegexp('^AccessLogs') } }),
    });
  });

  it('keeps raw events forever with rawRetentionDays=0', () => {
    const rules = Object.values(resourcesOf(variant, 'AWS::S3::Bucket')).flatMap(
      (b) => (b.Properties.LifecycleConfiguration as { Rules: Array<{ Prefix?: string }> } | undefined)?.Rules ?? [],
    );
    expect(rules.filter((r) => r.Prefix === 'events/')).toEqual([]);
  });
});

describe('DynamoDB', () => {
  it('is the single table: pk/sk strings, on-demand, Standard-IA, PITR, TTL, deletion protection, retained', () => {
    const table = only(resourcesOf(main, 'AWS::DynamoDB::Table'));
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      DeletionProtectionEnabled: true,
      TableClass: 'STANDARD_INFREQUENT_ACCESS',
    });
  });

  it('drops deletion protection with deletionProtection=false and point-in-time recovery with pointInTimeRecovery=false (still retained); Standard with tableClass=standard', () => {
    const table = only(resourcesOf(variant, 'AWS::DynamoDB::Table'));
    expect(table.Properties.TableClass).toBe('STANDARD');
    expect(table.Properties.DeletionProtectionEnabled).toBe(false);
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: false });
    expect(table.DeletionPolicy).toBe('Retain');
  });
});

describe('the hot path on function URLs (no API Gateway request per event)', () => {
  const functionIdOf = (s: Synthesized, name: string) =>
    Object.keys(resourcesOf(s, 'AWS::Lambda::Function')).find((id) => id.startsWith(`${name}Function`));

  it('gives the event and tracker functions public, buffered URLs without a CORS configuration of their own', () => {
    const urls = resourcesOf(main, 'AWS::Lambda::Url');
    for (const name of ['event', 'tracker']) {
      const url = Object.entries(urls).find(([id]) => id.startsWith(`${name}FunctionFunctionUrl`))?.[1];
      expect(url?.Properties, name).toEqual({
        AuthType: 'NONE',
        InvokeMode: 'BUFFERED',
        TargetFunctionArn: { 'Fn::GetAtt': [functionIdOf(main, name), 'Arn'] },
      });
      // Anyone may call them, and only through the URL.
      main.template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunctionUrl',
        Principal: '*',
        FunctionUrlAuthType: 'NONE',
        FunctionName: { 'Fn::GetAtt': [functionIdOf(main, name), 'Arn'] },
      });
      main.template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: '*',
        InvokedViaFunctionUrl: true,
        FunctionName: { 'Fn::GetAtt': [functionIdOf(main, name), 'Arn'] },
      });
    }
  });

  it('tells the tracker the event URL (EVENT_URL), so the script it serves posts there', () => {
    const tracker = resourcesOf(main, 'AWS::Lambda::Function')[functionIdOf(main, 'tracker') ?? ''];
    const env = (tracker?.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.EVENT_URL).toEqual({
      'Fn::Join': [
        '',
        [{ 'Fn::GetAtt': [expect.stringMatching(/^eventFunctionFunctionUrl/), 'FunctionUrl'] }, 'api/event'],
      ],
    });
  });

  it('keeps the HTTP API routes of the hot path for snippets installed before', () => {
    const keys = Object.values(resourcesOf(main, 'AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties.RouteKey as string,
    );
    expect(keys).toEqual(expect.arrayContaining(['GET /v.js', 'ANY /api/event']));
  });

  it("reserves no concurrency by default but the sessionizer's one, and hotPathConcurrency=N on both hot-path functions only (their URLs then take at most 10 × N requests/s)", () => {
    for (const [id, fn] of Object.entries(resourcesOf(main, 'AWS::Lambda::Function')))
      expect(fn.Properties.ReservedConcurrentExecutions, id).toBe(id.startsWith('sessionize') ? 1 : undefined);
    const reserved = Object.entries(resourcesOf(variant, 'AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
      .map(([id, fn]) => [id.replace(/Function.*$/, ''), fn.Properties.ReservedConcurrentExecutions]);
    expect(reserved.sort()).toEqual([
      ['event', 50],
      ['sessionize', 1],
      ['tracker', 50],
    ]);
  });

  it('alarms when either URL answers 5xx in 2 of 3 five-minute periods, on one metric (its own AWS/Lambda Url5xxCount)', () => {
    for (const name of ['event', 'tracker']) {
      const alarm = Object.entries(resourcesOf(main, 'AWS::CloudWatch::Alarm')).find(([id]) =>
        id.startsWith(`${name}Url5xxAlarm`),
      )?.[1];
      // One metric, no math: one alarm metric billed. Threshold 0 in 2 of 3: one failed request does not page,
      // a failure lasting 10 of 15 minutes does, on a quiet site as on a busy one (docs/deploy.md, "Alarms").
      expect(alarm?.Properties, name).toEqual(
        expect.objectContaining({
          Namespace: 'AWS/Lambda',
          MetricName: 'Url5xxCount',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionIdOf(main, name) } }],
          Statistic: 'Sum',
          Period: 300,
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          EvaluationPeriods: 3,
          DatapointsToAlarm: 2,
          TreatMissingData: 'notBreaching',
        }),
      );
      expect(alarm?.Properties.Metrics, name).toBeUndefined();
    }
  });
});

describe('alarms and outputs', () => {
  it('alarms on failed invocations, the API 5xx responses and the freshness of both deliveries (iterator age only while a stream drains)', () => {
    // The archive's conversion and partition-limit alarms and the scheduled function's are in deploy-flags.test.ts.
    const alarms = Object.entries(resourcesOf(main, 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => !/^(event|tracker)Url5xx|^ArchiveConversion|^ArchivePartitionLimit|^scheduledErrors/.test(id))
      .map(([, a]) => a.Properties);
    expect(alarms).toHaveLength(4);
    expect(alarms).toContainEqual(
      expect.objectContaining({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      }),
    );
    expect(alarms).not.toContainEqual(expect.objectContaining({ MetricName: 'IteratorAge' }));
    expect(Object.values(resourcesOf(variant, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties)).toContainEqual(
      expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'IteratorAge', Threshold: 300_000 }),
    );
    const freshness = alarms
      .filter((a) => a.MetricName === 'DeliveryToS3.DataFreshness')
      .map((a) => {
        const ref = (a.Dimensions as Array<{ Value: { Ref: string } }>)[0]?.Value.Ref ?? '';
        return [/^(Archive|Ingest)/.exec(ref)?.[1], a.Threshold];
      });
    expect(freshness.sort()).toEqual([
      ['Archive', 1800],
      ['Ingest', 300],
    ]);
    // The HTTP API's 5xx alarm: one metric, any 5xx in 2 of 3 five-minute periods.
    expect(alarms).toContainEqual(
      expect.objectContaining({
        Namespace: 'AWS/ApiGateway',
        MetricName: '5xx',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
      }),
    );
    expect(alarms.filter((a) => a.Metrics !== undefined)).toEqual([]);
  });

  it('outputs the tracking URL, the API URL, the table and the Athena workgroup', () => {
    const outputs = main.template.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'ApiUrl',
        'AthenaWorkGroup',
        'EventsBucket',
        'GlueDatabase',
        'IngestStreamName',
        'TableName',
        'TrackingUrl',
      ]),
    );
    // The tracker's own function URL, not the HTTP API (no API Gateway request per script load).
    expect(outputs.TrackingUrl?.Value).toEqual({
      'Fn::Join': [
        '',
        [{ 'Fn::GetAtt': [expect.stringMatching(/^trackerFunctionFunctionUrl/), 'FunctionUrl'] }, 'v.js'],
      ],
    });
    expect(outputs.EventUrl?.Value).toEqual({
      'Fn::Join': [
        '',
        [{ 'Fn::GetAtt': [expect.stringMatching(/^eventFunctionFunctionUrl/), 'FunctionUrl'] }, 'api/event'],
      ],
    });
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toMatch(/execute-api/);
    expect(outputs.AthenaWorkGroup?.Value).toEqual({ Ref: expect.stringMatching(/^ArchiveWorkGroup/) });
  });
});

describe('app mode and the registry plumbing', () => {
  // Stand-ins for the report, MCP and scheduled functions to come, on an existing entry.
  const registry: Record<string, FunctionSpec> = {
    health: FUNCTIONS.health,
    reportish: {
      entry: 'lambdas/entry/health.ts',
      description: 'stand-in report API',
      appOnly: true,
      table: 'read',
      routes: [{ path: '/api/v1/{proxy+}', methods: ['GET'] }],
    },
    mcpish: {
      entry: 'lambdas/entry/health.ts',
      description: 'stand-in MCP',
      appOnly: true,
      table: 'read',
      url: { output: 'McpishUrl', path: 'mcp' },
    },
    cronish: {
      entry: 'lambdas/entry/health.ts',
      description: 'stand-in scheduled job',
      table: 'readwrite',
      everyMinutes: 5,
      timeoutSeconds: 120,
    },
  };
  let off: Synthesized;
  let on: Synthesized;
  beforeAll(async () => {
    await ensureAppBuilt();
    off = synth({ functions: registry, config: { app: false }, bundle: false });
    on = synth({ functions: registry, config: { app: true }, bundle: false });
  });

  it("without app=true has no report route, no function URL but the hot path's and no MCP output", () => {
    for (const s of [main, off]) {
      const keys = Object.values(resourcesOf(s, 'AWS::ApiGatewayV2::Route')).map(
        (r) => r.Properties.RouteKey as string,
      );
      expect(keys.filter((k) => k.includes('/api/v1'))).toEqual([]);
      expect(Object.keys(s.template.findOutputs('McpUrl'))).toEqual([]);
    }
    expect(resourcesOf(off, 'AWS::Lambda::Url')).toEqual({});
    expect(Object.keys(resourcesOf(main, 'AWS::Lambda::Url')).sort()).toEqual([
      expect.stringMatching(/^eventFunctionFunctionUrl/),
      expect.stringMatching(/^trackerFunctionFunctionUrl/),
    ]);
    expect(Object.keys(off.template.findOutputs('McpishUrl'))).toEqual([]);
    expect(Object.keys(resourcesOf(off, 'AWS::Lambda::Function')).sort()).toEqual([
      expect.stringMatching(/^cronishFunction/),
      expect.stringMatching(/^healthFunction/),
    ]);
  });

  it('with app=true adds the app-only routes and a public function URL with its output', () => {
    // Besides the CDK's BucketDeployment provider of the app's files (test/infra/app-distribution.test.ts).
    expect(
      Object.keys(resourcesOf(on, 'AWS::Lambda::Function')).filter((id) => !id.startsWith('CustomCDKBucketDeployment')),
    ).toHaveLength(4);
    on.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'GET /api/v1/{proxy+}' });
    const url = only(resourcesOf(on, 'AWS::Lambda::Url'));
    expect(url.Properties).toMatchObject({
      AuthType: 'NONE',
      InvokeMode: 'BUFFERED',
      TargetFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^mcpish/), 'Arn'] },
    });
    on.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      Principal: '*',
      FunctionUrlAuthType: 'NONE',
    });
    // Public function URLs also need lambda:InvokeFunction, limited to calls through the URL.
    on.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: '*',
      InvokedViaFunctionUrl: true,
    });
    const output = on.template.findOutputs('McpishUrl').McpishUrl;
    expect(output?.Value).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^mcpishFunctionFunctionUrl/), 'FunctionUrl'] }, 'mcp']],
    });
  });

  it('gives a read-only function read actions only', () => {
    const policy = Object.entries(resourcesOf(on, 'AWS::IAM::Policy')).find(([id]) =>
      id.startsWith('reportishRole'),
    )?.[1];
    const actions = (policy?.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap((s) =>
      asArray(s.Action),
    );
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
    ]);
  });

  it('invokes a scheduled function every 5 minutes from EventBridge', () => {
    const rule = only(resourcesOf(on, 'AWS::Events::Rule'));
    expect(rule.Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [expect.stringMatching(/^cronishFunction/), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 600 },
        }),
      ],
    });
    on.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [Match.stringLikeRegexp('^cronishFunction'), 'Arn'] },
    });
    on.template.hasResourceProperties('AWS::Lambda::Function', { Description: 'stand-in scheduled job', Timeout: 120 });
  });

  it('stays cdk-nag clean with the new kinds of functions', () => {
    expect(on.nagViolations()).toEqual([]);
  });
});
