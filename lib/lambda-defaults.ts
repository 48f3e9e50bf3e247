import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kinesis from 'aws-cdk-lib/aws-kinesis';
import type * as firehose from 'aws-cdk-lib/aws-kinesisfirehose';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { KinesisEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { ESBUILD_BIN, duckdbChunkArgs, lambdaBuildOptions } from '../bench/bundle.js';
import { METRICS_NAMESPACE } from '../lambdas/observability/telemetry.js';
import { PK, SK } from '../lambdas/adapters/dynamo/table.js';
import { RAW_PREFIX } from '../lambdas/adapters/s3-raw-objects.js';
import { SWEEP_EVERY_MINUTES } from '../lambdas/handlers/sessionize-objects.js';

/** Repository root: entries, package-lock.json and the esbuild working directory. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Runtime and architecture of every Footfall function (`docs/architecture.md` "Runtime and versions"). */
export const RUNTIME = lambda.Runtime.NODEJS_22_X;
export const ARCHITECTURE = lambda.Architecture.ARM_64;
export const DEFAULT_MEMORY_MIB = 512;
export const DEFAULT_TIMEOUT = Duration.seconds(10);

let buildOptions: ReturnType<typeof lambdaBuildOptions> | undefined;

/**
 * NodejsFunction bundling from the esbuild options the benchmark measures
 * (`bench/bundle.ts`), so what is benchmarked is what is deployed: ESM for
 * node22, minified, the createRequire banner, the tracker inlined by `define`,
 * the runtime's AWS SDK v3 and DuckDB's native library (its layer) left external. Local esbuild, never Docker.
 */
export function sharedBundling({ duckdbChunk = false }: { duckdbChunk?: boolean } = {}): BundlingOptions {
  // The tracker is built once per process, not once per function.
  buildOptions ??= lambdaBuildOptions();
  return {
    ...(duckdbChunk ? { commandHooks: DUCKDB_CHUNK_HOOKS } : {}),
    format: OutputFormat.ESM,
    target: buildOptions.target,
    minify: buildOptions.minify,
    sourceMap: false,
    banner: buildOptions.banner.js,
    define: buildOptions.define,
    mainFields: buildOptions.mainFields,
    externalModules: buildOptions.external,
    esbuildArgs: { '--legal-comments': buildOptions.legalComments },
    forceDockerBundling: false,
  };
}

/** Quotes an argument for the POSIX shell NodejsFunction runs its local bundling commands in. */
const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/**
 * After the entry's bundle, the DuckDB chunk beside it (`DUCKDB_CHUNK` in `bench/bundle.ts`), which
 * the entry imports at its first filtered report or visit-table write (`lambdas/entry/duckdb-chunk.ts`).
 */
const DUCKDB_CHUNK_HOOKS = {
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir: string, outputDir: string) => [
    [ESBUILD_BIN, ...duckdbChunkArgs(inputDir, outputDir)].map(shellQuote).join(' '),
  ],
};

/** DynamoDB actions per access level: only the item API the adapters use (`lambdas/adapters/dynamo`). */
export const TABLE_ACTIONS = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  readwrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
} as const;
export type TableAccess = keyof typeof TABLE_ACTIONS;

/** Kinesis actions per access level. `read` is what an event source mapping needs. */
export const STREAM_ACTIONS = {
  put: ['firehose:PutRecordBatch'],
  read: [
    'kinesis:DescribeStream',
    'kinesis:DescribeStreamSummary',
    'kinesis:GetRecords',
    'kinesis:GetShardIterator',
    'kinesis:ListShards',
    'kinesis:SubscribeToShard',
  ],
} as const;
export type StreamAccess = keyof typeof STREAM_ACTIONS;

/**
 * How a consumer reads the event stream (Kinesis event source mapping). The sessionizer's DynamoDB
 * cost per event falls as its batches grow (rollup items are written once per batch, whatever the
 * number of events in them), so the window is long and the batch size caps the work of one
 * invocation: a 60 s window gives batches of about 23 events at 1M events a month on one shard,
 * 230 at 10M and 2,000 (the cap, every ~50 s) at 100M; dashboards lag by up to the window. Measured
 * cost per batch size and the choice: `docs/cost.md`, "Batching" (`npm run bench -- --only sessionize`).
 */
export const STREAM_CONSUMER_DEFAULTS = {
  batchSize: 2000,
  maxBatchingWindow: Duration.seconds(60),
  retryAttempts: 10,
} as const;

export interface FootfallFunctionProps {
  /** Entry file relative to the repository root, e.g. `lambdas/entry/event.ts`. */
  entry: string;
  /** Service name: Powertools' `POWERTOOLS_SERVICE_NAME` and the metric dimension. */
  service: string;
  description?: string;
  /** @default DEFAULT_MEMORY_MIB */
  memorySize?: number;
  /** @default DEFAULT_TIMEOUT */
  timeout?: Duration;
  environment?: Record<string, string>;
  /** Bundles the DuckDB chunk beside the entry (a function reading or writing the visit table). */
  duckdbChunk?: boolean;
  /** Retention of the function's log group. */
  logRetention: logs.RetentionDays;
  /** @default lambda.Tracing.ACTIVE */
  tracing?: lambda.Tracing;
  /** The hot path's logging (`HOT_PATH_LOGGING`) instead of Lambda's plain-text default. */
  hotPathLogging?: boolean;
  /** Reserved concurrency (also the throttle of a function URL: 10 × it requests/s); undefined: none. */
  reservedConcurrency?: number;
  /** @default ARCHITECTURE (arm64); x86_64 for the functions that run DuckDB (lib/visit-table.ts) */
  architecture?: lambda.Architecture;
  /** Lambda's ephemeral storage (`/tmp`); @default 512 MiB */
  ephemeralStorageSize?: Size;
}

/**
 * Logging of the functions invoked once per event (`FunctionSpec.hotPath`): Lambda's JSON log format
 * with the system log level at WARN, so Lambda drops its `START`, `END` and `REPORT` lines (INFO
 * platform events) before they reach CloudWatch Logs, about 0.3 KB an invocation that would be
 * billed as ingestion ($0.50/GB). The application log level stays INFO: the event function's
 * `events dropped` lines are INFO, and a stricter level would drop them. Duration and errors stay in the `AWS/Lambda`
 * metrics, which do not come from these lines. Source: AWS Lambda Developer Guide, "Log-level
 * filtering" (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html).
 */
export const HOT_PATH_LOGGING = {
  loggingFormat: lambda.LoggingFormat.JSON,
  systemLogLevelV2: lambda.SystemLogLevel.WARN,
} as const;

/**
 * A Footfall Lambda function with the defaults in one place: NodejsFunction
 * bundled by local esbuild with the shared options, nodejs22.x on arm64,
 * memory and timeout, its own log group with a retention, X-Ray tracing
 * (active unless `tracing` says otherwise), the hot path's logging when asked, the Powertools environment, and a role that starts empty: the log
 * group, X-Ray and whatever `bind*` grants, never an AWS managed policy and
 * never a wildcard action on data.
 */
export class FootfallFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** The on-failure destination of the sessionizer's invocations, when `consumeDelivery` was called. */
  failedBatches?: sqs.Queue;
  private integration?: HttpLambdaIntegration;

  constructor(scope: Construct, id: string, props: FootfallFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Footfall ${props.service} function`,
    });
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The only log permissions: streams and events in its own group (no logs:CreateLogGroup, no *).
    this.logGroup.grantWrite(this.role);

    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${PROJECT_ROOT}${props.entry}`,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: RUNTIME,
      architecture: props.architecture ?? ARCHITECTURE,
      ...(props.ephemeralStorageSize ? { ephemeralStorageSize: props.ephemeralStorageSize } : {}),
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MIB,
      timeout: props.timeout ?? DEFAULT_TIMEOUT,
      description: props.description,
      role: this.role,
      logGroup: this.logGroup,
      tracing: props.tracing ?? lambda.Tracing.ACTIVE,
      ...(props.hotPathLogging ? HOT_PATH_LOGGING : {}),
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      bundling: sharedBundling({ duckdbChunk: props.duckdbChunk }),
      environment: {
        POWERTOOLS_SERVICE_NAME: props.service,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        ...props.environment,
      },
    });

    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-L1',
        reason:
          'nodejs22.x is pinned on purpose (docs/architecture.md "Runtime and versions"): the code, its dependencies and the benchmark are tested on Node 22; moving to a newer runtime is a deliberate upgrade, not a drift.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the statement Lambda adds for active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords): X-Ray has no resource-level permissions, so its resource must be "*" (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html).',
      },
    );
  }

  /**
   * Sets `TABLE_NAME` and grants the item actions of `access` on the table (no
   * Scan, no table management). With `writePartitions`, the write actions are
   * granted only on items whose partition key matches one of the patterns
   * (`dynamodb:LeadingKeys`, IAM's fine-grained access control for DynamoDB);
   * with `readPartitions`, the read actions only on those and the write
   * partitions. A `read` function gets no write action at all, except
   * each of `updates`: `dynamodb:UpdateItem` on its partitions, of its attributes
   * only (`ForAllValues:StringEquals` `dynamodb:Attributes`, which must list
   * the key attributes too) and with `ReturnValues` NONE or absent, so it
   * reads nothing back (AWS DynamoDB developer guide, "Using IAM policy
   * conditions for fine-grained access control").
   */
  bindTable(
    table: dynamodb.ITable,
    access: TableAccess,
    partitions: {
      read?: readonly string[];
      write?: readonly string[];
      updates?: ReadonlyArray<{ partitions: readonly string[]; attributes: readonly string[] }>;
    } = {},
  ): this {
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
    const leadingKeys = (patterns: readonly string[]) => ({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...new Set(patterns)] },
    });
    const write = access === 'read' ? null : partitions.write;
    for (const update of partitions.updates ?? []) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:UpdateItem'],
          resources: [table.tableArn],
          conditions: {
            ...leadingKeys(update.partitions),
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': [PK, SK, ...update.attributes] },
            StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
          },
        }),
      );
    }
    if (!partitions.read && !write) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...TABLE_ACTIONS[access]], resources: [table.tableArn] }),
      );
      return this;
    }
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...TABLE_ACTIONS.read],
        resources: [table.tableArn],
        ...(partitions.read ? { conditions: leadingKeys([...partitions.read, ...(write ?? [])]) } : {}),
      }),
    );
    if (access === 'read') return this;
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...TABLE_ACTIONS.write],
        resources: [table.tableArn],
        ...(write ? { conditions: leadingKeys(write) } : {}),
      }),
    );
    return this;
  }

  /**
   * Writes to a delivery stream: its name in the environment variable `env` and
   * `firehose:PutRecordBatch` on that stream only (the event function to the ingest delivery,
   * `FirehoseEventStream`; the sessionizer to the archive's, `FirehoseArchiveDelivery`).
   */
  putDelivery(env: 'INGEST_STREAM' | 'ARCHIVE_STREAM', delivery: firehose.IDeliveryStream): this {
    this.fn.addEnvironment(env, delivery.deliveryStreamName);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: [...STREAM_ACTIONS.put], resources: [delivery.deliveryStreamArn] }),
    );
    return this;
  }

  /**
   * Consumes the ingest delivery's raw objects (`docs/ingestion.md`, "Choosing the ingestion path"):
   * S3 `ObjectCreated` notifications under `raw/` invoke it asynchronously (two retries, events
   * kept six hours, then their record goes to an encrypted SQS queue, the failed-batches queue),
   * a sweep every `SWEEP_EVERY_MINUTES` journals what a lost invocation missed, and it may read `raw/*`
   * (`s3:GetObject`) and list `raw/` (`s3:ListBucket` with that prefix). One instance at a time
   * (reserved concurrency 1): the journal has one writer, as one shard gave the stream's batches.
   * With `drainStream` (a stack upgraded from the event stream) it also consumes the stream
   * through its event source mapping until the stream is removed.
   */
  consumeDelivery(bucket: s3.IBucket, drainStream: kinesis.IStream | undefined): this {
    this.fn.addEnvironment('RAW_BUCKET', bucket.bucketName);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${RAW_PREFIX}*`)] }),
    );
    const bucketId = Stack.of(this).getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${RAW_PREFIX}*]`,
      reason:
        'The raw objects Firehose delivers under raw/ have keys made at delivery (time and a random id): reading any of them, and nothing else of the bucket, is the grant.',
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${RAW_PREFIX}*`] } },
      }),
    );
    const queue = new sqs.Queue(this, 'FailedBatches', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the failure destination of the sessionizer (records of invocations that exhausted their retries; the objects stay in the journal and on S3); nothing consumes it automatically, so it needs no DLQ of its own.',
    });
    this.failedBatches = queue;
    this.fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(queue),
    });
    bucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(this.fn), {
      prefix: RAW_PREFIX,
    });
    this.addSchedule(events.Schedule.rate(Duration.minutes(SWEEP_EVERY_MINUTES)));
    if (drainStream) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...STREAM_ACTIONS.read], resources: [drainStream.streamArn] }),
      );
      if (drainStream.encryptionKey) drainStream.encryptionKey.grantDecrypt(this.role);
      this.fn.addEventSource(
        new KinesisEventSource(drainStream, {
          startingPosition: lambda.StartingPosition.TRIM_HORIZON,
          batchSize: STREAM_CONSUMER_DEFAULTS.batchSize,
          maxBatchingWindow: STREAM_CONSUMER_DEFAULTS.maxBatchingWindow,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          retryAttempts: STREAM_CONSUMER_DEFAULTS.retryAttempts,
          onFailure: new SqsDlq(queue),
        }),
      );
    }
    return this;
  }

  /** Routes `methods path` of the HTTP API to this function (payload format 2.0). */
  addRoute(api: apigwv2.HttpApi, path: string, methods: apigwv2.HttpMethod[]): apigwv2.HttpRoute[] {
    this.integration ??= new HttpLambdaIntegration(`${this.node.id}Integration`, this.fn);
    return api.addRoutes({ path, methods, integration: this.integration });
  }

  /**
   * A public Lambda function URL (auth NONE, buffered): the function authenticates callers itself.
   * No CORS configuration: Lambda then passes every request, OPTIONS preflights included, to the
   * function and returns its headers as they are, so the handlers' own CORS answers hold (a
   * configured CORS would take precedence over them: AWS Lambda developer guide, "Cross-origin
   * resource sharing (CORS)", https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html#urls-cors).
   * Lambda bills a URL's requests as invocations only: no per-request fee as API Gateway's.
   */
  addPublicUrl(): lambda.FunctionUrl {
    return this.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.BUFFERED,
    });
  }

  /** Invokes the function on an EventBridge schedule (a scheduled rule, asynchronous invocation retried twice). */
  addSchedule(schedule: events.Schedule): events.Rule {
    return new events.Rule(this, 'Schedule', {
      schedule,
      description: `Footfall ${this.node.id} on a schedule`,
      targets: [new targets.LambdaFunction(this.fn, { retryAttempts: 2, maxEventAge: Duration.minutes(10) })],
    });
  }
}
