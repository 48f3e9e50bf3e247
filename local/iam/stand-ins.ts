import type { EventStream, SecretBox } from '../../lambdas/ports.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from '../partition-guard.js';
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
