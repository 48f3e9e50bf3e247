import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import * as firehose from 'aws-cdk-lib/aws-kinesisfirehose';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { RAW_PREFIX } from '../lambdas/adapters/s3-raw-objects.js';
import { ERRORS_PREFIX, acknowledgeS3Destination } from './archive.js';

/**
 * The ingest delivery's buffer (`docs/ingestion.md`, "Choosing the ingestion path"): an object
 * lands every 60 s with traffic, the batch the sessionizer's DynamoDB figures rest on (a minute
 * of a visitor's events in one batch, as the 60 s Kinesis window gave, `docs/cost.md`
 * "Batching"), and the dashboards' delay. 64 MiB is far above a minute of 100M events a month
 * (about 1.6 MB), so the interval decides. Without dynamic partitioning Firehose takes 0–900 s
 * (BufferingHints, Firehose API reference).
 */
export const INGEST_BUFFER_INTERVAL = Duration.seconds(60);
export const INGEST_BUFFER_SIZE = Size.mebibytes(64);
/** `raw/<UTC yyyy/MM/dd/HH>/`: the hour prefixes the sessionizer's sweep lists (`rawHourPrefix`). */
export const INGEST_PREFIX = `${RAW_PREFIX}!{timestamp:yyyy/MM/dd/HH}/`;
export const INGEST_ERROR_PREFIX = `${ERRORS_PREFIX}raw/!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/`;

export interface IngestDeliveryProps {
  /** The events bucket (`EventArchive.bucket`); its lifecycle expires `raw/` after a day. */
  bucket: s3.IBucket;
  logRetention: logs.RetentionDays;
}

/**
 * The ingest delivery stream: Direct PUT, no conversion and no partitioning, the event
 * function's JSON-lines records concatenated into one object a buffer under `raw/`, whose
 * `ObjectCreated` notification invokes the sessionizer (`FootfallStack`). Encrypted with an AWS
 * owned key (no charge); the bucket is SSE-S3.
 */
export class IngestDelivery extends Construct {
  readonly deliveryStream: firehose.DeliveryStream;

  constructor(scope: Construct, id: string, props: IngestDeliveryProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.deliveryStream = new firehose.DeliveryStream(this, 'Delivery', {
      encryption: firehose.StreamEncryption.awsOwnedKey(),
      destination: new firehose.S3Bucket(props.bucket, {
        dataOutputPrefix: INGEST_PREFIX,
        errorOutputPrefix: INGEST_ERROR_PREFIX,
        bufferingSize: INGEST_BUFFER_SIZE,
        bufferingInterval: INGEST_BUFFER_INTERVAL,
        loggingConfig: new firehose.EnableLogging(logGroup),
      }),
    });
    for (const child of logGroup.node.children)
      if (child instanceof logs.LogStream) child.applyRemovalPolicy(RemovalPolicy.DESTROY);
    acknowledgeS3Destination(this.deliveryStream, props.bucket);
  }
}
