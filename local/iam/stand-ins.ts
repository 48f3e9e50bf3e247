import type { EventStream, RawObjects, SecretBox } from '../../lambdas/ports.js';
import { RAW_PREFIX } from '../../lambdas/adapters/s3-raw-objects.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from '../partition-guard.js';
import { LOCAL_ARNS, authorizer } from './authorizer.js';

/** Asks function `name`'s policy for `action` on `resource`; throws `AccessDeniedException` as AWS answers. */
function demand(name: FunctionName, action: string, resource: string): void {
  demandWith(name, action, resource, {});
}

/** `demand` with the request's condition keys (`s3:prefix` of a listing). */
function demandWith(
  name: FunctionName,
  action: string,
  resource: string,
  context: Readonly<Record<string, readonly string[]>>,
): void {
  if (!iamEnforced()) return;
  if (!authorizer(name)({ action, resource, context }, resource))
    throw new AccessDeniedException(
      `User: arn:aws:sts::000000000000:assumed-role/${name}Role/${name} is not authorized to perform: ${action} on resource: ${resource}`,
    );
}

/**
 * The local secret box as function `name` may use it: sealing asks for `kms:GenerateDataKey` and
 * opening for `kms:Decrypt` on the secrets key, the calls `KmsSecretBox` makes in AWS, so a function
 * without the grant fails locally as it would there.
 */
export function functionSecretBox(box: SecretBox, name: FunctionName): SecretBox {
  return {
    seal: async (plaintext, context) => {
      demand(name, 'kms:GenerateDataKey', LOCAL_ARNS.secretsKey);
      return box.seal(plaintext, context);
    },
    open: async (sealed, context) => {
      demand(name, 'kms:Decrypt', LOCAL_ARNS.secretsKey);
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
      demandWith(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [RAW_PREFIX] });
      return objects.listSince(sinceMs);
    },
  };
}
