import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretBox } from '../adapters/secrets/kms-secret-box.js';
import { requireEnv } from './env.js';

/** The KMS envelope of webhook secrets, with the stack's key (`SECRETS_KEY_ID`, set on the app and webhook functions). */
export function kmsSecretBox(): KmsSecretBox {
  return new KmsSecretBox(new KMSClient({}), requireEnv('SECRETS_KEY_ID'));
}
