import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import type * as kinesis from 'aws-cdk-lib/aws-kinesis';
import * as firehose from 'aws-cdk-lib/aws-kinesisfirehose';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ARCHIVE_PARTITION_KEYS, EVENTS_PREFIX, glueColumns } from '../lambdas/domain/archive-schema.js';
import { NAMED_QUERIES } from '../sql/named-queries.js';
import { secureBucket } from './secure-bucket.js';
import { RAW_PREFIX } from '../lambdas/adapters/s3-raw-objects.js';
import { ERASURE_STAGING_PREFIX } from '../lambdas/adapters/s3-archive-eraser.js';

export { EVENTS_PREFIX };
/** Key prefix of records Firehose could not partition, convert or deliver. */
export const ERRORS_PREFIX = 'errors/';

const [SITE, DT] = ARCHIVE_PARTITION_KEYS.map((key) => key.name);
if (SITE !== 'site' || DT !== 'dt')
  throw new Error('the archive layout assumes the partition keys site and dt, in that order');

/**
 * The JQ 1.6 expressions of Firehose's inline parsing, one per partition key:
 * `site` as sent, `dt` the UTC date of `ts` (ms), as `archiveDt()` computes it
 * (JQ's strftime on a number formats its UTC broken-down time).
 */
export const PARTITION_QUERIES = {
  site: '.site',
  dt: '(.ts / 1000 | floor | strftime("%Y-%m-%d"))',
} as const;

export const FIREHOSE_PREFIX = `${EVENTS_PREFIX}site=!{partitionKeyFromQuery:site}/dt=!{partitionKeyFromQuery:dt}/`;
export const FIREHOSE_ERROR_PREFIX = `${ERRORS_PREFIX}!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/`;

/**
 * Firehose buffering. Parquet conversion needs at least 64 MiB and dynamic
 * partitioning at least 60 s; each (site, dt) partition has its own buffer, so
 * a file lands when 128 MiB (the most, `SizeInMBs` 1–128) or 15 minutes (the
 * most, `IntervalInSeconds` 0–900) accumulate for it, whichever first
 * (Firehose API reference, "BufferingHints":
 * https://docs.aws.amazon.com/firehose/latest/APIReference/API_BufferingHints.html).
 * The longest interval because dynamic partitioning bills $0.005 per 1,000
 * objects and S3 a PUT per object, one object per active site and buffer:
 * 15 minutes writes a third of the objects 5 minutes did (`docs/cost.md`).
 * The price is freshness: raw events reach Athena up to 15 minutes late, and
 * with dynamic partitioning's multi-stage buffering up to 1.5 times that
 * (`FIREHOSE_DELIVERY_FACTOR`).
 */
export const FIREHOSE_BUFFER_SIZE = Size.mebibytes(128);
export const FIREHOSE_BUFFER_INTERVAL = Duration.minutes(15);
/**
 * How late, as a multiple of the buffer interval, a record may reach S3 with
 * dynamic partitioning: "end-to-end delay of a batch of records might be 1.5
 * times of the configured buffering hint time" (Amazon Data Firehose developer
 * guide, "Buffer data for dynamic partitioning":
 * https://docs.aws.amazon.com/firehose/latest/dev/buffering.html). The rebuild
 * fence and the archive freshness alarm wait this long.
 */
export const FIREHOSE_DELIVERY_FACTOR = 1.5;

/** Where the workgroup writes query results in the results bucket. */
export const ATHENA_RESULTS_PREFIX = 'results/';
/** Athena results expire after this many days. */
export const ATHENA_RESULTS_DAYS = 30;
/** Per-query scan limit of the workgroup (Athena bills per byte scanned): 100 GiB. */
export const ATHENA_SCAN_LIMIT_BYTES = 100 * 1024 ** 3;

export interface EventArchiveProps {
  /**
   * The event stream of a stack deployed before the raw delivery, while it drains
   * (`-c drainStream=true`): its delivery stream keeps archiving what is left in it.
   */
  drainStream?: kinesis.IStream;
  /** Days the raw events are kept; 0 = forever. */
  rawRetentionDays: number;
  /** Target of the buckets' server access logs. */
  accessLogs: s3.IBucket;
  /** Glue database and Athena workgroup name (lowercase letters, digits, `_`). */
  name: string;
  logRetention: logs.RetentionDays;
}

/** Key prefix of the ingest delivery's raw JSON objects, which the sessionizer reads (`RAW_PREFIX`). */
export const RAW_OBJECTS_PREFIX = RAW_PREFIX;
/**
 * Days the raw JSON objects are kept: as long as the sessionizer's journal remembers them (INGEST
 * items, 7 days). The sessionizer reads them within minutes, and the archive is fed from them
 * (`docs/ingestion.md`, "Archive packed"), so an object must outlive any outage of the sessionizer
 * the journal itself survives, or its events would never be archived.
 */
export const RAW_OBJECTS_DAYS = 7;

/**
 * The raw event archive, the source of truth (`docs/sql.md`): the sessionizer
 * forwards every raw object's events, packed as JSON lines, to a Direct PUT
 * delivery stream that splits them (multi-record deaggregation), converts JSON to
 * Parquet against the Glue table and writes `events/site=/dt=` partitions; the
 * Glue table (partition projection, no crawler) and an Athena workgroup with
 * the named queries read them. The same bucket holds the ingest delivery's
 * raw objects (`raw/`, `RAW_OBJECTS_DAYS`).
 */
export class EventArchive extends Construct {
  readonly bucket: s3.Bucket;
  readonly resultsBucket: s3.Bucket;
  readonly database: glue.CfnDatabase;
  readonly table: glue.CfnTable;
  /** The archive's delivery stream (Direct PUT). */
  readonly deliveryStream: firehose.DeliveryStream;
  /** The stream-sourced delivery of a stack draining its event stream (`drainStream`). */
  readonly drainDelivery: firehose.DeliveryStream | undefined;
  readonly workGroup: athena.CfnWorkGroup;
  readonly namedQueries: athena.CfnNamedQuery[];
  /** The Glue database's and the Athena workgroup's name. */
  readonly name: string;

  constructor(scope: Construct, id: string, props: EventArchiveProps) {
    super(scope, id);
    this.name = props.name;
    const account = Stack.of(this).account;

    this.bucket = secureBucket(this, 'Events', {
      accessLogs: props.accessLogs,
      lifecycleRules: [
        ...(props.rawRetentionDays > 0
          ? [{ id: 'raw-events-retention', prefix: EVENTS_PREFIX, expiration: Duration.days(props.rawRetentionDays) }]
          : []),
        { id: 'delivery-errors', prefix: ERRORS_PREFIX, expiration: Duration.days(90) },
        { id: 'raw-objects', prefix: RAW_OBJECTS_PREFIX, expiration: Duration.days(RAW_OBJECTS_DAYS) },
      ],
    });

    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: account,
      databaseInput: { name: props.name, description: 'Footfall raw event archive' },
    });

    const location = `s3://${this.bucket.bucketName}/${EVENTS_PREFIX}`;
    this.table = new glue.CfnTable(this, 'Table', {
      catalogId: account,
      databaseName: props.name,
      tableInput: {
        name: 'events',
        description: 'Raw events, one row per event (lambdas/domain/tracked-event.ts); filter on site and dt',
        tableType: 'EXTERNAL_TABLE',
        partitionKeys: ARCHIVE_PARTITION_KEYS.map(({ name, type }) => ({ name, type })),
        parameters: {
          EXTERNAL: 'TRUE',
          classification: 'parquet',
          'parquet.compression': 'SNAPPY',
          'projection.enabled': 'true',
          'projection.site.type': 'injected',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': '2024-01-01,NOW',
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          'storage.location.template': `${location}site=\${site}/dt=\${dt}/`,
        },
        storageDescriptor: {
          columns: glueColumns().map(({ name, type }) => ({ name, type })),
          location,
          inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
          serdeInfo: {
            serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
            parameters: { 'serialization.format': '1' },
          },
          compressed: false,
          storedAsSubDirectories: false,
        },
      },
    });
    this.table.addResourceDependency(this.database);

    this.deliveryStream = this.parquetDelivery('DirectDelivery', props.logRetention, undefined);
    // Same logical ids as the stack on the stream had (its delivery and log group), so the upgrade keeps them.
    this.drainDelivery = props.drainStream
      ? this.parquetDelivery('Delivery', props.logRetention, new firehose.KinesisStreamSource(props.drainStream))
      : undefined;

    this.resultsBucket = secureBucket(this, 'AthenaResults', {
      accessLogs: props.accessLogs,
      lifecycleRules: [{ id: 'expire-results', expiration: Duration.days(ATHENA_RESULTS_DAYS) }],
    });
    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: props.name,
      description: 'Footfall: SQL over the raw event archive',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: ATHENA_SCAN_LIMIT_BYTES,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/${ATHENA_RESULTS_PREFIX}`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });

    this.namedQueries = NAMED_QUERIES.map((query) => {
      const named = new athena.CfnNamedQuery(this, `Query-${query.name}`, {
        name: query.name,
        description: query.description,
        database: props.name,
        queryString: query.sql,
        workGroup: this.workGroup.ref,
      });
      named.addResourceDependency(this.table);
      return named;
    });
  }
  /**
   * What `AthenaArchiveReader` and `S3ArchiveEraser` need to read the archive through Athena, rewrite
   * the objects holding an erased person and delete a deleted site's objects (`docs/security.md`,
   * "Erasing a person"; `docs/deploy.md`, "Deleting a site"), and no more: queries in this workgroup
   * only; the Glue catalog, database and events table read (partition projection: no partitions are
   * written); on the events bucket, objects under `events/` and the erasure staging prefix read,
   * written and deleted, and listing only those prefixes (`s3:prefix`); on the results bucket, the
   * workgroup's `results/` read and written. Athena reads and writes S3 with the caller's credentials
   * (Athena user guide, "Access to Amazon S3"), hence the data and results grants. Sets
   * `ATHENA_WORKGROUP`, `GLUE_DATABASE` and `EVENTS_BUCKET`.
   */
  grantErasure(fn: lambda.IFunction & { addEnvironment(key: string, value: string): unknown }, role: iam.IRole): void {
    const stack = Stack.of(this);
    fn.addEnvironment('ATHENA_WORKGROUP', this.workGroup.ref);
    fn.addEnvironment('GLUE_DATABASE', this.name);
    fn.addEnvironment('EVENTS_BUCKET', this.bucket.bucketName);
    const glueArn = (resource: string) => stack.formatArn({ service: 'glue', resource, resourceName: undefined });
    const statements = [
      new iam.PolicyStatement({
        actions: ['athena:StartQueryExecution', 'athena:GetQueryExecution', 'athena:GetQueryResults'],
        resources: [stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.workGroup.ref })],
      }),
      new iam.PolicyStatement({
        actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartitions'],
        resources: [glueArn('catalog'), glueArn(`database/${this.name}`), glueArn(`table/${this.name}/events`)],
      }),
      new iam.PolicyStatement({
        actions: ['s3:GetBucketLocation'],
        resources: [this.bucket.bucketArn, this.resultsBucket.bucketArn],
      }),
      new iam.PolicyStatement({
        actions: ['s3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${EVENTS_PREFIX}*`, `${ERASURE_STAGING_PREFIX}*`] } },
      }),
      new iam.PolicyStatement({
        actions: [
          's3:GetObject',
          's3:PutObject',
          's3:DeleteObject',
          's3:AbortMultipartUpload',
          's3:ListMultipartUploadParts',
        ],
        resources: [
          this.bucket.arnForObjects(`${EVENTS_PREFIX}*`),
          this.bucket.arnForObjects(`${ERASURE_STAGING_PREFIX}*`),
        ],
      }),
      new iam.PolicyStatement({
        actions: ['s3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [this.resultsBucket.bucketArn],
      }),
      new iam.PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [this.resultsBucket.arnForObjects(`${ATHENA_RESULTS_PREFIX}*`)],
      }),
    ];
    for (const statement of statements) role.addToPrincipalPolicy(statement);
    const id = (bucket: s3.Bucket) => stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
    const reason =
      'Erasing a person rewrites and deletes archive objects whose keys Firehose and Athena make at write time (a time and a random id): the wildcard is the archive prefix, the erasure staging prefix or the workgroup results prefix of this stack\'s buckets only (docs/security.md, "Erasing a person").';
    const wildcards = [
      `<${id(this.bucket)}.Arn>/${EVENTS_PREFIX}*`,
      `<${id(this.bucket)}.Arn>/${ERASURE_STAGING_PREFIX}*`,
      `<${id(this.resultsBucket)}.Arn>/${ATHENA_RESULTS_PREFIX}*`,
    ];
    for (const resource of wildcards)
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
  }

  /**
   * A delivery stream converting JSON events to Parquet into `events/site=/dt=`: Direct PUT
   * (`source` undefined, encrypted with an AWS owned key at no charge) or reading the event stream.
   */
  private parquetDelivery(
    id: string,
    logRetention: logs.RetentionDays,
    source: firehose.ISource | undefined,
  ): firehose.DeliveryStream {
    const firehoseLogs = new logs.LogGroup(this, `${id}Logs`, {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stream = new firehose.DeliveryStream(this, id, {
      ...(source ? { source } : { encryption: firehose.StreamEncryption.awsOwnedKey() }),
      destination: new firehose.S3Bucket(this.bucket, {
        dataOutputPrefix: FIREHOSE_PREFIX,
        errorOutputPrefix: FIREHOSE_ERROR_PREFIX,
        bufferingSize: FIREHOSE_BUFFER_SIZE,
        bufferingInterval: FIREHOSE_BUFFER_INTERVAL,
        loggingConfig: new firehose.EnableLogging(firehoseLogs),
        // One JSON event a record once deaggregated; OpenX parses `ts` (epoch milliseconds) into the Glue `timestamp` column.
        dataFormatConversion: {
          schemaConfiguration: firehose.SchemaConfiguration.fromCfnTable(this.table),
          inputFormat: firehose.InputFormat.OPENX_JSON,
          outputFormat: new firehose.ParquetOutputFormat({ compression: firehose.ParquetCompression.SNAPPY }),
        },
        dynamicPartitioning: { enabled: true },
        // Direct PUT records are the sessionizer's JSON lines, up to 500 events each: split back into
        // one event a record before the partition keys are read (docs/ingestion.md, "Archive packed").
        processors: [
          ...(source ? [] : [firehose.RecordDeAggregationProcessor.json()]),
          firehose.MetadataExtractionProcessor.jq16({ ...PARTITION_QUERIES }),
        ],
      }),
    });
    // The log stream the L2 destination adds is retained by default; it goes with its group and the stack.
    for (const child of firehoseLogs.node.children)
      if (child instanceof logs.LogStream) child.applyRemovalPolicy(RemovalPolicy.DESTROY);
    acknowledgeS3Destination(stream, this.bucket);
    if (source)
      Validations.of(stream).acknowledge({
        id: 'AwsSolutions-KDF1',
        reason:
          'Firehose server-side encryption applies only to Direct PUT sources; this delivery stream reads the Kinesis stream, which is encrypted at rest (aws/kinesis), and writes to an SSE-S3 bucket, so the data is encrypted at every hop (https://docs.aws.amazon.com/firehose/latest/dev/encryption.html).',
      });
    return stream;
  }
}

/**
 * The grants the aws-kinesisfirehose L2 S3 destination gives a delivery stream's role, acknowledged
 * for cdk-nag: `bucket.grantReadWrite` on this bucket only, and glue:GetSchemaVersion on `*` when
 * it converts formats.
 */
export function acknowledgeS3Destination(stream: firehose.DeliveryStream, bucket: s3.IBucket): void {
  const bucketId = Stack.of(stream).getLogicalId(bucket.node.defaultChild as s3.CfnBucket);
  const grantReason =
    'Granted by the aws-kinesisfirehose L2 S3 destination (bucket.grantReadWrite on the events bucket only): the wildcards are CDK action groups and the objects of this one bucket, which Firehose writes, lists and cleans up after failed multipart uploads.';
  Validations.of(stream).acknowledge(
    ...['s3:Abort*', 's3:DeleteObject*', 's3:GetBucket*', 's3:GetObject*', 's3:List*'].map((action) => ({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason: grantReason,
    })),
    { id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`, reason: grantReason },
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'glue:GetSchemaVersion, added by the L2 SchemaConfiguration.fromCfnTable for Glue Schema Registry lookups, has no resource-level scoping in that grant; the table itself is read through glue:GetTable* scoped to the catalog, database and events table.',
    },
  );
}
