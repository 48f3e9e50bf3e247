import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

export interface SecureBucketProps {
  lifecycleRules?: s3.LifecycleRule[];
  /** Where S3 server access logs go (prefix = the construct id); none for the log bucket itself. */
  accessLogs?: s3.IBucket;
}

/**
 * An S3 bucket with the stack's baseline: SSE-S3, all public access blocked,
 * ACLs disabled, TLS 1.2+ required by the bucket policy, incomplete multipart
 * uploads cleaned up, retained when the stack is deleted.
 */
export function secureBucket(scope: Construct, id: string, props: SecureBucketProps = {}): s3.Bucket {
  return new s3.Bucket(scope, id, {
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ...(props.lifecycleRules ?? []),
    ],
    ...(props.accessLogs ? { serverAccessLogsBucket: props.accessLogs, serverAccessLogsPrefix: `${id}/` } : {}),
  });
}
