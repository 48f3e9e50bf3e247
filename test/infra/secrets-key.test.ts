import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../lib/functions.js';
import { synth, type Synthesized } from './synth.js';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Issue 18.5: webhook signing secrets are sealed with a customer-managed KMS
 * key (`docs/security.md`): rotation on, retained with the table, usable to
 * seal only by the app function and to open only by the webhook function.
 */
describe('the KMS key of webhook secrets (context app=true)', () => {
  let on: Synthesized;
  let keyId: string;
  beforeAll(() => {
    on = synth({ config: { app: true }, bundle: false });
    keyId = Object.keys(on.template.findResources('AWS::KMS::Key'))[0]!;
  });

  /** The KMS actions a function's role policy allows, with the resources they name. */
  function kmsGrants(name: string): Array<{ actions: string[]; resource: unknown }> {
    const policies = Object.entries(on.template.findResources('AWS::IAM::Policy')).filter(([id]) =>
      id.startsWith(`${name}Role`),
    );
    return policies.flatMap(([, p]) =>
      (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((s) =>
        asArray(s.Action).some((a) => a.startsWith('kms:')),
      ).map((s) => {
        expect(s.Effect).toBe('Allow');
        return { actions: asArray(s.Action).sort(), resource: s.Resource };
      }),
    );
  }

  it('exists once, with yearly rotation, and is retained on stack deletion', () => {
    on.template.resourceCountIs('AWS::KMS::Key', 1);
    on.template.hasResource('AWS::KMS::Key', {
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    on.template.hasOutput('SecretsKeyArn', { Value: { 'Fn::GetAtt': [keyId, 'Arn'] } });
  });

  it.each([
    ['webhook', ['kms:Decrypt']],
    ['app', ['kms:GenerateDataKey']],
  ])('%s may only %s, on this key, and knows its ARN', (name, actions) => {
    expect(kmsGrants(name)).toEqual([{ actions, resource: { 'Fn::GetAtt': [keyId, 'Arn'] } }]);
    const [, fn] = Object.entries(on.template.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith(name),
    )!;
    expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.SECRETS_KEY_ID).toEqual({
      'Fn::GetAtt': [keyId, 'Arn'],
    });
  });

  it('gives no other function any KMS permission', () => {
    const others = Object.keys(FUNCTIONS).filter((name) => !['webhook', 'app'].includes(name));
    expect(others).toEqual(expect.arrayContaining(['report', 'mcp', 'event', 'sessionize', 'scheduled']));
    for (const name of others) expect(kmsGrants(name), name).toEqual([]);
  });

  it('stays free of unacknowledged cdk-nag findings', () => {
    expect(on.nagViolations()).toEqual([]);
  });
});
