import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import { BUDGET_ALERTS } from '../../lib/budget.js';
import { CertificateStack, certificateStackName } from '../../lib/certificate-stack.js';
import { parseConfig } from '../../lib/config.js';
import { addStacks } from '../../lib/stacks.js';
import { synth, testApp, type Synthesized } from './synth.js';

/**
 * The custom domain (`-c appDomain=`, `-c appCertificateArn=`), the certificate stack in us-east-1, and
 * the spend guard (`-c monthlyBudgetUsd=`), as synthesized (docs/deploy.md, "Custom domain" and "Spend guard").
 */

const DOMAIN = 'analytics.example.com';
const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

type Resource = { Type: string; Properties: Record<string, unknown> };
const one = (s: Synthesized | Template, type: string): Resource => {
  const template = s instanceof Template ? s : s.template;
  const all = Object.values(template.findResources(type)) as Resource[];
  expect(all).toHaveLength(1);
  return all[0]!;
};
const trackerEnv = (s: Synthesized): Record<string, unknown> => {
  const fns = s.template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const tracker = Object.entries(fns).find(([id]) => id.startsWith('trackerFunction'));
  return (tracker?.[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
};

beforeAll(async () => {
  await ensureAppBuilt(() => {});
}, 120_000);

describe('a custom domain for the app', () => {
  let plain: Synthesized;
  let custom: Synthesized;
  beforeAll(() => {
    plain = synth({ config: { app: true }, bundle: false });
    custom = synth({ config: { app: true, appDomain: DOMAIN, appCertificateArn: CERTIFICATE }, bundle: false });
  }, 240_000);

  it('puts the domain and the us-east-1 certificate on the distribution, SNI and TLS 1.2 at least', () => {
    const config = one(custom, 'AWS::CloudFront::Distribution').Properties.DistributionConfig as Record<
      string,
      unknown
    >;
    expect(config.Aliases).toEqual([DOMAIN]);
    expect(config.ViewerCertificate).toEqual({
      AcmCertificateArn: CERTIFICATE,
      SslSupportMethod: 'sni-only',
      MinimumProtocolVersion: 'TLSv1.2_2021',
    });
    const before = one(plain, 'AWS::CloudFront::Distribution').Properties.DistributionConfig as Record<string, unknown>;
    expect(before.Aliases).toBeUndefined();
    expect(before.ViewerCertificate).toBeUndefined();
  });

  it('serves the tracker posting to the custom domain (first-party), and says where to point the DNS record', () => {
    expect(trackerEnv(custom).EVENT_URL).toBe(`https://${DOMAIN}/api/event`);
    expect(JSON.stringify(trackerEnv(plain).EVENT_URL)).toMatch(/eventFunctionFunctionUrl/);
    expect(custom.template.findOutputs('AppUrl').AppUrl?.Value).toBe(`https://${DOMAIN}/`);
    expect(JSON.stringify(custom.template.findOutputs('AppDomainTarget').AppDomainTarget?.Value)).toMatch(/DomainName/);
    expect(plain.template.findOutputs('AppDomainTarget')).toEqual({});
  });

  it('is cdk-nag clean without the default-certificate acknowledgment (CFR4 met, not waived)', () => {
    expect(custom.nagViolations()).toEqual([]);
    const acknowledged = (s: Synthesized) =>
      s.stack.node
        .findAll()
        .flatMap((c) => c.node.metadata.map((m) => JSON.stringify(m.data)))
        .some((d) => d.includes('AwsSolutions-CFR4'));
    expect(acknowledged(plain)).toBe(true);
    expect(acknowledged(custom)).toBe(false);
  });

  it('refuses a certificate outside us-east-1, a certificate without a domain, and a domain without app mode', () => {
    expect(() => parseConfig({ app: true, appDomain: DOMAIN, appCertificateArn: CERTIFICATE })).not.toThrow();
    expect(() =>
      parseConfig({ app: true, appDomain: DOMAIN, appCertificateArn: CERTIFICATE.replace('us-east-1', 'eu-west-1') }),
    ).toThrow(/appCertificateArn: an ACM certificate ARN in us-east-1/);
    expect(() => parseConfig({ app: true, appCertificateArn: CERTIFICATE })).toThrow(
      /appCertificateArn: needs appDomain/,
    );
    expect(() => parseConfig({ appDomain: DOMAIN })).toThrow(/appDomain: needs app mode/);
    expect(() => parseConfig({ app: true, appDomain: 'https://analytics.example.com/' })).toThrow(/appDomain/);
    expect(parseConfig({ app: 'true', appDomain: 'Analytics.Example.com' }).appDomain).toBe(DOMAIN);
  });

  it('without a certificate ARN, synthesizes only the certificate stack in us-east-1, saying what to deploy next', () => {
    const config = parseConfig({ app: true, appDomain: DOMAIN });
    const lines: string[] = [];
    const stacks = addStacks(testApp(), config, { log: (line) => lines.push(line) });
    expect(stacks.map((s) => [s.stackName, s.region])).toEqual([[certificateStackName('Footfall'), 'us-east-1']]);
    expect(lines.join('\n')).toMatch(/deploy Footfall with -c appCertificateArn=/);
    expect(() => synth({ config: { app: true, appDomain: DOMAIN }, bundle: false })).toThrow(
      /needs -c appCertificateArn=.*deploy FootfallCertificate first/,
    );
    // With cdk.json's feature flags, as `cdk synth` runs it, and no bundling.
    const flags = JSON.parse(readFileSync(fileURLToPath(new URL('../../cdk.json', import.meta.url)), 'utf8')) as {
      context: Record<string, unknown>;
    };
    const cdkApp = testApp({ context: { ...flags.context, 'aws:cdk:bundling-stacks': [] } });
    const both = addStacks(cdkApp, { ...config, appCertificateArn: CERTIFICATE }, { log: () => {} });
    expect(both.map((s) => s.stackName)).toEqual(['Footfall']);
  }, 120_000);
});

describe('the certificate stack', () => {
  it('creates a DNS-validated certificate of the domain in us-east-1, whatever region the Footfall stack is in', () => {
    const app = testApp();
    const stack = new CertificateStack(app, certificateStackName('Footfall'), {
      domain: DOMAIN,
      env: { account: '123456789012', region: 'eu-central-1' },
    });
    expect(stack.region).toBe('us-east-1');
    expect(stack.account).toBe('123456789012');
    const template = Template.fromStack(stack);
    expect(one(template, 'AWS::CertificateManager::Certificate').Properties).toMatchObject({
      DomainName: DOMAIN,
      ValidationMethod: 'DNS',
    });
    expect(template.findOutputs('CertificateArn').CertificateArn?.Value).toEqual({ Ref: expect.any(String) });
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  });
});

describe('the spend guard', () => {
  it('creates a monthly cost budget alerting at 80% and 100% actual and 100% forecast, to the alarm email and topic', () => {
    const topic = 'arn:aws:sns:eu-central-1:123456789012:ops';
    const s = synth({
      config: { monthlyBudgetUsd: 50, alarmEmail: 'ops@example.com', alarmTopicArn: topic },
      bundle: false,
    });
    const budget = one(s, 'AWS::Budgets::Budget').Properties;
    expect(budget.Budget).toEqual({
      BudgetType: 'COST',
      TimeUnit: 'MONTHLY',
      BudgetLimit: { Amount: 50, Unit: 'USD' },
    });
    const notifications = budget.NotificationsWithSubscribers as Array<{
      Notification: Record<string, unknown>;
      Subscribers: unknown[];
    }>;
    expect(notifications.map((n) => [n.Notification.NotificationType, n.Notification.Threshold])).toEqual([
      ['ACTUAL', 80],
      ['ACTUAL', 100],
      ['FORECASTED', 100],
    ]);
    expect(notifications).toHaveLength(BUDGET_ALERTS.length);
    for (const n of notifications) {
      expect(n.Notification).toMatchObject({ ComparisonOperator: 'GREATER_THAN', ThresholdType: 'PERCENTAGE' });
      expect(n.Subscribers).toEqual([
        { SubscriptionType: 'EMAIL', Address: 'ops@example.com' },
        { SubscriptionType: 'SNS', Address: topic },
      ]);
    }
    expect(s.nagViolations()).toEqual([]);
  }, 120_000);

  it('has no budget unless asked, and refuses one with nowhere to send its alerts', () => {
    const s = synth({ bundle: false });
    expect(s.template.findResources('AWS::Budgets::Budget')).toEqual({});
    expect(() => parseConfig({ monthlyBudgetUsd: 50 })).toThrow(/monthlyBudgetUsd: needs alarmEmail or alarmTopicArn/);
    expect(() => parseConfig({ monthlyBudgetUsd: '0', alarmEmail: 'ops@example.com' })).toThrow(/monthlyBudgetUsd/);
    expect(
      parseConfig({ monthlyBudgetUsd: '50', alarmTopicArn: 'arn:aws:sns:eu-central-1:123456789012:ops' }),
    ).toMatchObject({ monthlyBudgetUsd: 50 });
  }, 120_000);
});
