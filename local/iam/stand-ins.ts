import type { EventStream, SecretBox } from '../../lambdas/ports.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from './partition-guard.js';
import { LOCAL_ARNS, archiveObjectArn, authorizer } from './authorizer.js';
import type { STACK_ROLES } from './policies.js';

/** Whose policy a stand-in asks: a function of the registry, or a stack role the twin plays (`STACK_ROLES`). */
export type Principal = FunctionName | keyof typeof STACK_ROLES;

/**
 * Asks `name`'s synthesized policy for `action` on `resource` (an ARN of `LOCAL_ARNS`), for a
 * stand-in that makes no SDK call: the action and ARN its AWS adapter's call would be authorized as.
 * @throws AccessDeniedException, as AWS answers, when the policy does not allow it (never with `FOOTFALL_IAM=off`)
 */
export function demand(name: Principal, action: string, resource: string): void {
  if (!iamEnforced()) return;
  if (!authorizer(name)({ action, resource, context: {} }, resource))
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

/** The local stream as function `name` writes it: `kinesis:PutRecords` on the stream, as `KinesisEventStream` calls it. */
export function functionStream(stream: EventStream, name: FunctionName): EventStream {
  return {
    put: async (events) => {
      demand(name, 'kinesis:PutRecords', LOCAL_ARNS.stream);
      return stream.put(events);
    },
  };
}

/**
 * What the event source mapping asks of function `name`'s role before each batch it hands over
 * (it polls with that role: `kinesis:GetShardIterator`, `kinesis:GetRecords` on the stream).
 * @throws AccessDeniedException when the role lacks either
 */
export function demandStreamRead(name: FunctionName): void {
  for (const action of ['kinesis:GetShardIterator', 'kinesis:GetRecords']) demand(name, action, LOCAL_ARNS.stream);
}

/**
 * What Firehose's delivery asks of its roles for one batch the local archive writer takes off the
 * stream (`local/consumers.ts`, `archivePoller`): the service role reads the stream
 * (`kinesis:GetShardIterator`, `kinesis:GetRecords`), the destination role reads the Glue table's
 * schema for the Parquet conversion (`glue:GetTableVersions` on its catalog, database and table).
 * @throws AccessDeniedException when either role lacks a grant
 */
export function demandArchiveBatch(): void {
  for (const action of ['kinesis:GetShardIterator', 'kinesis:GetRecords'])
    demand('archiveSource', action, LOCAL_ARNS.stream);
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
