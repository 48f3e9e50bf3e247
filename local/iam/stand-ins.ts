import type { EventStream, SecretBox } from '../../lambdas/ports.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from './partition-guard.js';
import { LOCAL_ARNS, authorizer } from './authorizer.js';

/** Asks function `name`'s policy for `action` on `resource`; throws `AccessDeniedException` as AWS answers. */
function demand(name: FunctionName, action: string, resource: string): void {
  if (!iamEnforced()) return;
  if (!authorizer(name)({ action, resource, context: {} }, resource))
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
