import { KMSClient } from '@aws-sdk/client-kms';
import { SSMClient } from '@aws-sdk/client-ssm';
import { KmsSecretBox } from '../adapters/secrets/kms-secret-box.js';
import { ParameterSecretBox } from '../adapters/secrets/parameter-secret-box.js';
import { requireEnv } from './env.js';

/**
 * The box of webhook secrets: the stack's key in Parameter Store (`SECRETS_STACK` names its parameters, set on the app
 * and webhook functions), and the KMS key of earlier releases while `-c legacySecretsKey=true` keeps
 * it (`LEGACY_SECRETS_KEY_ID`), to open what is not re-sealed yet.
 */
export function stackSecretBox(): ParameterSecretBox {
  const legacy = process.env.LEGACY_SECRETS_KEY_ID;
  return new ParameterSecretBox(
    new SSMClient({}),
    requireEnv('SECRETS_STACK'),
    legacy ? new KmsSecretBox(new KMSClient({}), legacy) : undefined,
  );
}
