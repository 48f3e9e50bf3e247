import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../lib/functions.js';
import { synth, type Synthesized } from './synth.js';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Webhook signing secrets are sealed to the stack's X25519 key pair in Parameter Store
 * (`docs/security.md`): no customer managed KMS key by default; the app function reads the public key
 * and may only create private keys, the webhook function alone reads them, no other function
 * touches either. `-c legacySecretsKey=true` keeps the KMS key of earlier releases, retained, for
 * the webhook function to open secrets not yet re-sealed (`docs/deploy.md`).
 */
describe('the key pair of webhook secrets (context app=true)', () => {
  let on: Synthesized;
  let legacy: Synthesized;
  beforeAll(() => {
    on = synth({ config: { app: true }, bundle: false });
    legacy = synth({ config: { app: true, legacySecretsKey: true }, bundle: false });
  });

  /** The SSM and KMS actions a function's role policy allows, with the resources they name. */
  function grants(
    s: Synthesized,
    name: string,
    prefix: 'ssm:' | 'kms:',
  ): Array<{ actions: string[]; resource: unknown }> {
    const policies = Object.entries(s.template.findResources('AWS::IAM::Policy')).filter(([id]) =>
      id.startsWith(`${name}Role`),
    );
    return policies.flatMap(([, p]) =>
      (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((st) =>
        asArray(st.Action).some((a) => a.startsWith(prefix)),
      ).map((st) => {
        expect(st.Effect).toBe('Allow');
        return { actions: asArray(st.Action).sort(), resource: st.Resource };
      }),
    );
  }
  const parameterArn = (name: string) => ({
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':ssm:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        `:parameter/${name}`,
      ],
    ],
  });

  it('has no KMS key of its own by default, and keeps the old one retained with -c legacySecretsKey=true', () => {
    on.template.resourceCountIs('AWS::KMS::Key', 0);
    legacy.template.resourceCountIs('AWS::KMS::Key', 1);
    legacy.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('the webhook and imports functions read private keys only; the app function reads the public key and creates private keys', () => {
    // The imports function opens the API key of a provider history import, sealed by the app (docs/payments.md).
    for (const name of ['webhook', 'imports'])
      expect(grants(on, name, 'ssm:'), name).toEqual([
        { actions: ['ssm:GetParameter'], resource: parameterArn('footfall/Footfall/secrets-key/*') },
      ]);
    expect(grants(on, 'app', 'ssm:')).toEqual([
      {
        actions: ['ssm:GetParameter', 'ssm:PutParameter'],
        resource: parameterArn('footfall/Footfall/secrets-public-key'),
      },
      { actions: ['ssm:PutParameter'], resource: parameterArn('footfall/Footfall/secrets-key/*') },
    ]);
    for (const name of ['webhook', 'app']) expect(grants(on, name, 'kms:'), name).toEqual([]);
  });

  it('gives no other function any Parameter Store or KMS permission', () => {
    const others = Object.keys(FUNCTIONS).filter((name) => !['webhook', 'app', 'imports'].includes(name));
    expect(others).toEqual(expect.arrayContaining(['report', 'mcp', 'event', 'sessionize', 'scheduled']));
    for (const name of others) {
      expect(grants(on, name, 'ssm:'), name).toEqual([]);
      expect(grants(legacy, name, 'kms:'), name).toEqual([]);
    }
  });

  it('with the old key kept, only lets the webhook, app and imports functions decrypt with it (secrets not yet re-sealed)', () => {
    const keyId = Object.keys(legacy.template.findResources('AWS::KMS::Key'))[0]!;
    for (const name of ['webhook', 'app', 'imports'])
      expect(grants(legacy, name, 'kms:'), name).toEqual([
        { actions: ['kms:Decrypt'], resource: { 'Fn::GetAtt': [keyId, 'Arn'] } },
      ]);
    legacy.template.hasOutput('SecretsKeyArn', { Value: { 'Fn::GetAtt': [keyId, 'Arn'] } });
  });

  it('stays free of unacknowledged cdk-nag findings', () => {
    expect(on.nagViolations()).toEqual([]);
    expect(legacy.nagViolations()).toEqual([]);
  });
});
