import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import { synth, type Synthesized } from './synth.js';

/**
 * Email reports in the stack (`-c reportSender=`, docs/deploy.md "Email reports"): the scheduled
 * function alone may call SES, only `ses:SendEmail`, only as the sender's address or domain
 * identity; without the flag no function has any SES permission and the stack still deploys.
 */

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown };

const fnEnv = (s: Synthesized, prefix: string): Record<string, unknown> => {
  const fns = s.template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const fn = Object.entries(fns).find(([id]) => id.startsWith(prefix));
  return (fn?.[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
};
/** Every IAM statement of the template naming an SES action, with the policy it is in. */
const sesStatements = (s: Synthesized): Array<{ policy: string; statement: Statement }> => {
  const policies = s.template.findResources('AWS::IAM::Policy') as Record<string, Resource>;
  return Object.entries(policies).flatMap(([id, p]) =>
    ((p.Properties.PolicyDocument as { Statement: Statement[] }).Statement ?? [])
      .filter((st) => [st.Action].flat().some((a) => a.startsWith('ses:')))
      .map((statement) => ({ policy: id, statement })),
  );
};
const sesArn = (resource: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:${resource}`,
    ],
  ],
});

describe('email reports in the stack', () => {
  let withSender: Synthesized;
  let without: Synthesized;
  beforeAll(async () => {
    await ensureAppBuilt(() => {});
    withSender = synth({ config: { app: true, reportSender: 'reports@example.com' }, bundle: false });
    without = synth({ config: { app: true }, bundle: false });
  }, 240_000);

  it('grants the scheduled function ses:SendEmail on the sender identity, its domain and the configuration set, nothing else', () => {
    const found = sesStatements(withSender);
    expect(found).toHaveLength(1);
    expect(found[0]!.policy).toMatch(/^scheduled/);
    expect(found[0]!.statement).toMatchObject({
      Action: 'ses:SendEmail',
      Effect: 'Allow',
      Resource: [
        sesArn('configuration-set/Footfall-reports'),
        sesArn('identity/example.com'),
        sesArn('identity/reports@example.com'),
      ],
    });
  });

  it('gives the scheduled function the sender and the app URL, and the app function the sender', () => {
    expect(fnEnv(withSender, 'scheduled')).toMatchObject({
      REPORT_SENDER: 'reports@example.com',
      REPORT_CONFIGURATION_SET: 'Footfall-reports',
      APP_URL: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [expect.stringMatching(/^App/), 'DomainName'] }]] },
    });
    expect(fnEnv(withSender, 'app')).toMatchObject({ REPORT_SENDER: 'reports@example.com' });
  });

  it('sends through a configuration set that suppresses addresses that bounce or complain', () => {
    withSender.template.resourceCountIs('AWS::SES::ConfigurationSet', 1);
    withSender.template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      Name: 'Footfall-reports',
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
    });
    const fns = withSender.template.findResources('AWS::Lambda::Function') as Record<string, { DependsOn?: string[] }>;
    const scheduled = Object.entries(fns).find(([id]) => id.startsWith('scheduled'))![1];
    expect(scheduled.DependsOn?.some((d) => d.startsWith('ReportMail'))).toBe(true);
  });

  it('without a sender: no SES permission anywhere and no sender in any function (reports off)', () => {
    expect(sesStatements(without)).toEqual([]);
    without.template.resourceCountIs('AWS::SES::ConfigurationSet', 0);
    expect(fnEnv(without, 'scheduled').REPORT_SENDER).toBeUndefined();
    expect(fnEnv(without, 'app').REPORT_SENDER).toBeUndefined();
  });
});
