/**
 * The Parameter Store names of a stack's secrets key pair (`ParameterSecretBox`), one set per stack
 * so that two stacks in one account and region keep their own (`docs/security.md`): the public key
 * (a String the app function reads and creates), and each private key (a SecureString under the
 * AWS managed key `aws/ssm`, named by its public key's fingerprint, that only the webhook function reads).
 */
export function secretsParameterNames(stackName: string): {
  publicKey: string;
  privateKeys: string;
  privateKey: (fingerprint: string) => string;
} {
  const privateKeys = `/footfall/${stackName}/secrets-key`;
  return {
    publicKey: `/footfall/${stackName}/secrets-public-key`,
    privateKeys,
    privateKey: (fingerprint) => `${privateKeys}/${fingerprint}`,
  };
}
