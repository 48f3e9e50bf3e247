import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import { CONFIG_DEFAULTS, CONFIG_KEYS, type FootfallConfig } from '../../lib/config.js';
import { ORIGIN_SECRET_HEADER } from '../../lambdas/domain/client-address.js';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';
import { reliabilityOnly } from '../support/suite.js';
import { synth, type Synthesized } from './synth.js';

/**
 * `cdk synth` and cdk-nag for every context flag `docs/deploy.md` documents and the combinations it
 * suggests; the stack name and account-wide names; removal policies against the teardown section;
 * alarms and their actions; the origin secret of the viewer address. Wiring only: no bundling.
 */

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
const resources = (s: Synthesized): Record<string, Resource> =>
  (s.template.toJSON() as { Resources: Record<string, Resource> }).Resources;
const ofType = (s: Synthesized, type: string) => Object.entries(resources(s)).filter(([, r]) => r.Type === type);

const deployDoc = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');
/** The keys of the "Context options" table of docs/deploy.md. */
const documentedKeys = [
  ...(deployDoc.split('### Context options')[1]?.split('\n#')[0] ?? '').matchAll(/^\| `([A-Za-z]+)` \|/gm),
].map((m) => m[1]);

/**
 * One row per documented flag, set away from its default, plus the combinations docs/deploy.md
 * suggests (a staging stack beside production, a throwaway stack, the hot path capped with alarms
 * mailed). Each must synthesize with no unacknowledged cdk-nag finding.
 */
const ROWS: Array<[string, Partial<FootfallConfig>]> = [
  ['app', { app: true }],
  ['drainStream', { drainStream: true }],
  ['shards=on-demand', { drainStream: true, shards: 'on-demand' }],
  ['shards=4', { drainStream: true, shards: 4 }],
  ['rawRetentionDays=0', { rawRetentionDays: 0 }],
  ['deletionProtection=false', { deletionProtection: false }],
  ['throttleRate, throttleBurst', { throttleRate: 50, throttleBurst: 100 }],
  ['logRetentionDays=365', { logRetentionDays: 365 }],
  ['iteratorAgeAlarmSeconds=60', { drainStream: true, iteratorAgeAlarmSeconds: 60 }],
  ['geoDatabase', { geoDatabase: PACKAGED_COUNTRY_DATABASE }],
  ['hotPathTracing', { hotPathTracing: true }],
  ['pointInTimeRecovery=false', { pointInTimeRecovery: false }],
  ['legacySecretsKey', { app: true, legacySecretsKey: true }],
  ['tableClass=standard', { tableClass: 'standard' }],
  ['hotPathConcurrency=100', { hotPathConcurrency: 100 }],
  ['stackName', { stackName: 'FootfallStaging' }],
  ['alarmEmail', { alarmEmail: 'ops@example.com' }],
  ['alarmTopicArn', { alarmTopicArn: 'arn:aws:sns:eu-central-1:123456789012:ops' }],
  ['mcpOrigins (app)', { app: true, mcpOrigins: ['https://agent.example.com', 'http://localhost:6274'] }],
  [
    'appDomain, appCertificateArn',
    {
      app: true,
      appDomain: 'analytics.example.com',
      appCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
    },
  ],
  ['monthlyBudgetUsd', { monthlyBudgetUsd: 50, alarmEmail: 'ops@example.com' }],
  ['reportSender (app)', { app: true, reportSender: 'reports@example.com' }],
  ['filteredReports=false (app)', { app: true, filteredReports: false }],
  [
    'throwaway app stack: no PITR, no deletion protection, on-demand, a week of logs',
    {
      app: true,
      pointInTimeRecovery: false,
      deletionProtection: false,
      shards: 'on-demand',
      logRetentionDays: 7,
      stackName: 'FootfallTest',
    },
  ],
  [
    'production app stack: capped hot path, traced, alarms mailed and to a topic',
    {
      app: true,
      hotPathConcurrency: 100,
      hotPathTracing: true,
      alarmEmail: 'ops@example.com',
      alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:pager',
    },
  ],
];

beforeAll(async () => {
  await ensureAppBuilt(() => {});
}, 120_000);

/**
 * Every row's flags in one config (where two rows set the same key, the later row's value): one synth under
 * cdk-nag that builds the resources of every flag. `npm test` runs it; each row alone, one synth each, runs in
 * the reliability suite (test/support/suite.ts).
 */
const EVERY_FLAG: Partial<FootfallConfig> = Object.assign({}, ...ROWS.map(([, config]) => config));

/** A row's synth: its flags away from their defaults, no unacknowledged cdk-nag finding, the stack name. */
function synthesizesClean(config: Partial<FootfallConfig>): void {
  for (const [key, value] of Object.entries(config))
    expect(value, key).not.toEqual(CONFIG_DEFAULTS[key as keyof FootfallConfig]);
  const s = synth({ config, bundle: false, validate: true });
  expect(s.nagViolations()).toEqual([]);
  expect(s.stack.stackName).toBe(config.stackName ?? 'Footfall');
}

describe('every documented context flag synthesizes cdk-nag clean', () => {
  it('the table below covers every key of lib/config.ts, and docs/deploy.md documents each', () => {
    const set = new Set(ROWS.flatMap(([, config]) => Object.keys(config)));
    expect([...CONFIG_KEYS].sort()).toEqual([...set].sort());
    expect([...documentedKeys].sort()).toEqual([...CONFIG_KEYS].sort());
  });

  // The first validating synth of the file also loads CDK's template-validation rules.
  it('every flag at once', () => synthesizesClean(EVERY_FLAG), 240_000);
});

reliabilityOnly(
  'every documented context flag alone, and each suggested combination, synthesizes cdk-nag clean',
  () => {
    it.each(ROWS)('%s', (_name, config) => synthesizesClean(config), 120_000);
  },
);

describe('two stacks in one account, or one name in two regions', () => {
  let prod: Synthesized;
  let staging: Synthesized;
  beforeAll(() => {
    prod = synth({ config: { app: true }, bundle: false });
    staging = synth({ config: { app: true, stackName: 'FootfallStaging' }, bundle: false });
  }, 240_000);

  /** Names CloudFront and the Glue/Athena catalog keep per account (and region): none may be shared by two stacks. */
  const accountNames = (s: Synthesized): string[] => {
    const r = resources(s);
    const pick = (type: string, path: (p: Record<string, unknown>) => unknown) =>
      Object.values(r)
        .filter((x) => x.Type === type)
        .map((x) => JSON.stringify(path(x.Properties)));
    return [
      ...pick(
        'AWS::CloudFront::ResponseHeadersPolicy',
        (p) => (p.ResponseHeadersPolicyConfig as { Name: unknown }).Name,
      ),
      ...pick('AWS::CloudFront::OriginRequestPolicy', (p) => (p.OriginRequestPolicyConfig as { Name: unknown }).Name),
      ...pick('AWS::CloudFront::OriginAccessControl', (p) => (p.OriginAccessControlConfig as { Name: unknown }).Name),
      ...pick('AWS::CloudFront::Function', (p) => p.Name),
      ...pick('AWS::Glue::Database', (p) => (p.DatabaseInput as { Name: unknown }).Name),
      ...pick('AWS::Athena::WorkGroup', (p) => p.Name),
    ];
  };

  it('names every account-wide resource after the stack, and the CloudFront ones after the region too', () => {
    const prodNames = accountNames(prod);
    const stagingNames = accountNames(staging);
    expect(prodNames).toHaveLength(6);
    expect(stagingNames.filter((n) => prodNames.includes(n))).toEqual([]);
    for (const name of prodNames.slice(0, 4)) expect(name).toContain('AWS::Region');
    for (const name of stagingNames.slice(0, 3)) expect(name).toContain('FootfallStaging');
  });

  it('takes the stack name from -c stackName, and rejects one CloudFront names could not hold', async () => {
    const { parseConfig } = await import('../../lib/config.js');
    expect(parseConfig({ stackName: 'FootfallStaging' }).stackName).toBe('FootfallStaging');
    expect(() => parseConfig({ stackName: 'x'.repeat(41) })).toThrow(/stackName/);
    expect(() => parseConfig({ stackName: 'foot_fall' })).toThrow(/stackName/);
    expect(staging.stack.stackName).toBe('FootfallStaging');
  });

  it('retains only what docs/deploy.md "Tear down" says: the table and the buckets (and the old secrets key while kept); deletes the delivery streams and every log group', () => {
    const retained = Object.values(resources(prod))
      .filter((r) => r.DeletionPolicy === 'Retain')
      .map((r) => r.Type);
    expect(new Set(retained)).toEqual(new Set(['AWS::DynamoDB::Table', 'AWS::S3::Bucket']));
    expect(ofType(prod, 'AWS::DynamoDB::Table')).toHaveLength(1);
    expect(ofType(prod, 'AWS::KMS::Key')).toHaveLength(0);
    const legacy = synth({ config: { app: true, legacySecretsKey: true }, bundle: false });
    expect(only(ofType(legacy, 'AWS::KMS::Key'))[1].DeletionPolicy).toBe('Retain');
    const teardown = deployDoc.split('## Tear down')[1] ?? '';
    expect(teardown).toMatch(/\*\*DynamoDB table\*\*/);
    expect(teardown).toMatch(/\*\*KMS key\*\*[^]*schedule-key-deletion/);
    expect(teardown).toMatch(/\*\*S3 buckets\*\*/);
    // CloudFormation deletes a resource without a DeletionPolicy.
    expect(ofType(prod, 'AWS::Kinesis::Stream')).toHaveLength(0);
    const deliveries = ofType(prod, 'AWS::KinesisFirehose::DeliveryStream');
    expect(deliveries).toHaveLength(2);
    for (const [id, d] of deliveries) expect(d.DeletionPolicy ?? 'Delete', id).toBe('Delete');
    const logGroups = ofType(prod, 'AWS::Logs::LogGroup');
    expect(logGroups.length).toBeGreaterThan(8);
    for (const [id, group] of logGroups) expect(group.DeletionPolicy ?? 'Delete', id).toBe('Delete');
  });

  it('sends the origin secret from CloudFront to the API, and gives the app function the same value', () => {
    const secret = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
    const [, distribution] = only(ofType(prod, 'AWS::CloudFront::Distribution'));
    const originsOf = (distribution.Properties.DistributionConfig as { Origins: Array<Record<string, unknown>> })
      .Origins;
    const withHeader = originsOf.filter((o) => o.OriginCustomHeaders);
    expect(withHeader).toHaveLength(1);
    expect(JSON.stringify(withHeader[0]?.DomainName)).toMatch(/HttpApi/);
    expect(withHeader[0]?.OriginCustomHeaders).toEqual([{ HeaderName: ORIGIN_SECRET_HEADER, HeaderValue: secret }]);
    const app = ofType(prod, 'AWS::Lambda::Function').find(([id]) => id.startsWith('appFunction'));
    expect((app?.[1].Properties.Environment as { Variables: Record<string, unknown> }).Variables.ORIGIN_SECRET).toEqual(
      secret,
    );
  });
});

describe('alarms on the archive and compaction, with an action', () => {
  let plain: Synthesized;
  let mailed: Synthesized;
  let both: Synthesized;
  beforeAll(() => {
    plain = synth({ bundle: false });
    mailed = synth({ config: { alarmEmail: 'ops@example.com' }, bundle: false });
    both = synth({
      config: { alarmEmail: 'ops@example.com', alarmTopicArn: 'arn:aws:sns:eu-central-1:123456789012:ops' },
      bundle: false,
    });
  }, 240_000);

  const alarms = (s: Synthesized) =>
    ofType(s, 'AWS::CloudWatch::Alarm').map(
      ([id, r]) => ({ id, ...r.Properties }) as Record<string, unknown> & { id: string },
    );

  it('alarms on Parquet conversion failures and the partition limit of the delivery stream', () => {
    const firehose = alarms(plain).filter(
      (a) => a.Namespace === 'AWS/Firehose' && a.MetricName !== 'DeliveryToS3.DataFreshness',
    );
    expect(firehose.map((a) => [a.MetricName, a.Statistic, a.Threshold, a.ComparisonOperator])).toEqual(
      expect.arrayContaining([
        ['FailedConversion.Records', 'Sum', 0, 'GreaterThanThreshold'],
        ['PartitionCountExceeded', 'Maximum', 0, 'GreaterThanThreshold'],
      ]),
    );
    for (const a of firehose)
      expect(a.Dimensions).toEqual([{ Name: 'DeliveryStreamName', Value: { Ref: expect.stringMatching(/^Archive/) } }]);
  });

  it("alarms when the scheduled function's runs fail three times in a row", () => {
    const errors = alarms(plain).filter((a) => a.MetricName === 'Errors');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      Namespace: 'AWS/Lambda',
      Period: 300,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.stringMatching(/^scheduledFunction/) } }],
    });
  });

  it('has no action without alarmEmail or alarmTopicArn', () => {
    for (const a of alarms(plain)) expect(a.AlarmActions, a.id).toBeUndefined();
    expect(ofType(plain, 'AWS::SNS::Topic')).toEqual([]);
  });

  it('with alarmEmail, mails every alarm and its recovery through a TLS-only topic', () => {
    const [topicId] = only(ofType(mailed, 'AWS::SNS::Topic'));
    expect(only(ofType(mailed, 'AWS::SNS::Subscription'))[1].Properties).toMatchObject({
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    const list = alarms(mailed);
    expect(list.length).toBeGreaterThanOrEqual(8);
    for (const a of list) {
      expect(a.AlarmActions, a.id).toEqual([{ Ref: topicId }]);
      expect(a.OKActions, a.id).toEqual([{ Ref: topicId }]);
    }
    const policy = only(ofType(mailed, 'AWS::SNS::TopicPolicy'))[1];
    expect(JSON.stringify(policy.Properties)).toContain('aws:SecureTransport');
    expect(mailed.template.findOutputs('AlarmTopicArn')).not.toEqual({});
  });

  it('with alarmTopicArn as well, notifies the given topic too', () => {
    const [topicId] = only(ofType(both, 'AWS::SNS::Topic'));
    for (const a of alarms(both))
      expect(a.AlarmActions, a.id).toEqual(['arn:aws:sns:eu-central-1:123456789012:ops', { Ref: topicId }]);
  });
});

function only<T>(values: T[]): T {
  expect(values).toHaveLength(1);
  return values[0] as T;
}
