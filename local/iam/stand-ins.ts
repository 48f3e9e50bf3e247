import type { EventStream, RawObjects, SecretBox } from '../../lambdas/ports.js';
import { RAW_PREFIX } from '../../lambdas/adapters/s3-raw-objects.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from './partition-guard.js';
import { LOCAL_ARNS, archiveObjectArn, authorizer } from './authorizer.js';
import type { STACK_ROLES } from './policies.js';

/** Whose policy a stand-in asks: a function of the registry, or a stack role the twin plays (`STACK_ROLES`). */
export type Principal = FunctionName | keyof typeof STACK_ROLES;

/**
 * Asks `name`'s synthesized policy for `action` on `resource` (an ARN of `LOCAL_ARNS`) with the
 * request's condition keys (`context`, e.g. the `s3:prefix` of a listing), for a stand-in that makes
 * no SDK call: the action and ARN its AWS adapter's call would be authorized as.
 * @throws AccessDeniedException, as AWS answers, when the policy does not allow it (never with `FOOTFALL_IAM=off`)
 */
export function demand(
  name: Principal,
  action: string,
  resource: string,
  context: Readonly<Record<string, readonly string[]>> = {},
): void {
  if (!iamEnforced()) return;
  if (!authorizer(name)({ action, resource, context }, resource))
    throw new AccessDeniedException(
      `User: arn:aws:sts::000000000000:assumed-role/${name}Role/${name} is not authorized to perform: ${action} on resource: ${resource}`,
    );
}

/**
 * The local secret box as function `name` may use it, asking for the calls `ParameterSecretBox` makes
 * in AWS: sealing reads the stack's public key (`ssm:GetParameter`) and, the first time, creates a
 * private key and the public key (`ssm:PutParameter` on both); opening reads a private key
 * (`ssm:GetParameter`). A function without the grant fails locally as it would there.
 */
export function functionSecretBox(box: SecretBox, name: FunctionName): SecretBox {
  return {
    seal: async (plaintext, context) => {
      demand(name, 'ssm:GetParameter', LOCAL_ARNS.secretsPublicKey);
      demand(name, 'ssm:PutParameter', LOCAL_ARNS.secretsPrivateKey);
      demand(name, 'ssm:PutParameter', LOCAL_ARNS.secretsPublicKey);
      return box.seal(plaintext, context);
    },
    open: async (sealed, context) => {
      demand(name, 'ssm:GetParameter', LOCAL_ARNS.secretsPrivateKey);
      return box.open(sealed, context);
    },
  };
}

/**
 * The local stream as function `name` writes it: `firehose:PutRecordBatch` on the ingest and the
 * archive delivery streams, as `FirehoseEventStream` calls them (the local log stands in for both).
 */
export function functionStream(stream: EventStream, name: FunctionName): EventStream {
  return {
    put: async (events) => {
      demand(name, 'firehose:PutRecordBatch', LOCAL_ARNS.ingestStream);
      demand(name, 'firehose:PutRecordBatch', LOCAL_ARNS.archiveStream);
      return stream.put(events);
    },
  };
}

/**
 * The local raw objects as function `name` reads them: `s3:GetObject` on the object and
 * `s3:ListBucket` with the `raw/` prefix on the events bucket, as `S3RawObjects` calls S3.
 */
export function functionRawObjects(objects: RawObjects, name: FunctionName): RawObjects {
  return {
    get: async (key) => {
      demand(name, 's3:GetObject', `${LOCAL_ARNS.eventsBucket}/${key}`);
      return objects.get(key);
    },
    listSince: async (sinceMs) => {
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [RAW_PREFIX] });
      return objects.listSince(sinceMs);
    },
  };
}

/**
 * What the archive's delivery asks of its destination role for one batch the local archive writer
 * takes (`local/consumers.ts`, `archivePoller`): the Glue table's schema for the Parquet conversion
 * (`glue:GetTableVersions` on its catalog, database and table). A Direct PUT delivery has no source
 * role: the event function's own `firehose:PutRecordBatch` is asked by `functionStream`.
 * @throws AccessDeniedException when the role lacks a grant
 */
export function demandArchiveBatch(): void {
  for (const arn of LOCAL_ARNS.glueTable) demand('archiveDestination', 'glue:GetTableVersions', arn);
}

/**
 * What Firehose's destination role needs to write the archive's object `key` (`s3:PutObject` on
 * `<bucket>/<key>`), asked by the local archive writer before it writes the file.
 * @throws AccessDeniedException when the role lacks it
 */
export function demandArchiveWrite(key: string): void {
  demand('archiveDestination', 's3:PutObject', archiveObjectArn(key));
}
