import { beforeAll, describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { ensureAppBuilt } from '../../app/build.js';
import { FUNCTIONS } from '../../lib/functions.js';
import { ERASURE_STAGING_PREFIX } from '../../lambdas/adapters/s3-archive-eraser.js';
import { partitionPatterns } from '../../lambdas/adapters/dynamo/items.js';
import { synth, type Synthesized } from './synth.js';

/**
 * The operations function (`lib/functions.ts`, `docs/deploy.md` "Deleting a site", `docs/security.md`
 * "Erasing a person"): in app mode only, on a 15-minute schedule, one run at a time, with the
 * archive grants `S3ArchiveEraser` and `AthenaArchiveReader` need and no function but it holding them.
 * As `-c filteredReports=false` builds it: the visit table's writer it also is by default (x86_64, the DuckDB
 * layer, `visit-table/`) is test/infra/visit-table-stack.test.ts's.
 */

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Condition?: Record<string, unknown> };

const resources = (s: Synthesized, type: string) =>
  Object.entries(s.template.findResources(type) as Record<string, Resource>);
/** Every statement of the policies attached to the role of the function whose logical id starts with `prefix`. */
const statementsOf = (s: Synthesized, prefix: string): Statement[] =>
  resources(s, 'AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${prefix}`))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
const actionsOf = (statements: Statement[]) => statements.flatMap((st) => [st.Action].flat());
/** The key pattern of an object ARN of the template (`{"Fn::Join": ["", [<bucket arn>, "/events/*"]]}`). */
const objectPatterns = (statements: Statement[], action: string) =>
  statements
    .filter((st) => [st.Action].flat().includes(action))
    .flatMap((st) => [st.Resource].flat())
    .map((r) => JSON.stringify(r).match(/"\/([^"]*)"\]\]\}$/)?.[1] ?? JSON.stringify(r));

describe('the operations function', () => {
  let app: Synthesized;
  let plain: Synthesized;
  beforeAll(async () => {
    await ensureAppBuilt(() => {});
    app = synth({ config: { app: true, filteredReports: false }, bundle: false });
    plain = synth({ bundle: false });
  }, 240_000);

  it('is deployed in app mode only: Node 22 on arm64, 1024 MB, Lambda’s 15 minutes, one instance at a time', () => {
    app.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: FUNCTIONS.operations.description,
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 1024,
      Timeout: 900,
      ReservedConcurrentExecutions: 1,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'operations',
          TABLE_NAME: Match.anyValue(),
          ATHENA_WORKGROUP: { Ref: Match.stringLikeRegexp('^ArchiveWorkGroup') },
          GLUE_DATABASE: 'footfall',
          EVENTS_BUCKET: { Ref: Match.stringLikeRegexp('^ArchiveEvents') },
        }),
      },
    });
    const described = (s: Synthesized) =>
      resources(s, 'AWS::Lambda::Function').filter(
        ([, r]) => r.Properties.Description === FUNCTIONS.operations.description,
      );
    expect(described(plain)).toEqual([]);
    // Its own log group, kept as long as the others' (-c logRetentionDays).
    const logs = resources(app, 'AWS::Logs::LogGroup').filter(([id]) => id.startsWith('operationsLogs'));
    expect(logs.map(([, r]) => r.Properties.RetentionInDays)).toEqual([30]);
  });

  it('runs every 15 minutes from EventBridge, retried twice, with no alarm of its own (the app shows a failed step)', () => {
    app.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^operationsFunction'), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 600 },
        }),
      ],
    });
    const alarms = Object.values(app.template.findResources('AWS::CloudWatch::Alarm'));
    const watched = alarms.flatMap((a) =>
      ((a.Properties.Dimensions ?? []) as Array<{ Value?: { Ref?: string } }>).map((d) => d.Value?.Ref ?? ''),
    );
    expect(watched.filter((ref) => ref.startsWith('operationsFunction'))).toEqual([]);
    // The scheduled function keeps its alarm: nothing else reports that compaction stopped.
    expect(watched.some((ref) => ref.startsWith('scheduledFunction'))).toBe(true);
  });

  it('may write exactly the registry’s partitions of a deletion and an erasure, never a key, a user or a session', () => {
    const statements = statementsOf(app, 'operations');
    const writes = statements.find((st) => [st.Action].flat().includes('dynamodb:DeleteItem'))!;
    const leading = (writes.Condition?.['ForAllValues:StringLike'] as Record<string, string[]>)['dynamodb:LeadingKeys'];
    expect(leading).toEqual(partitionPatterns('operations', 'write'));
    for (const pattern of [
      'R#*',
      'VIS#*',
      'PAY#*',
      'SITES',
      'ERASURE_REQUESTS',
      'ERASURES#*',
      'SITE_DELETIONS',
      'REBUILD#*',
    ])
      expect(leading).toContain(pattern);
    for (const pattern of ['USER#*', 'SESSION#*', 'APIKEY#*', 'KEYS', 'ACCOUNT#*', 'SALT', 'INGEST'])
      expect(leading).not.toContain(pattern);
    expect(actionsOf(statements)).not.toContain('dynamodb:Scan');
  });

  it('queries the archive in the stack’s workgroup and rewrites only the archive, the staging and the results prefixes', () => {
    const statements = statementsOf(app, 'operations');
    const athena = statements.filter((st) => [st.Action].flat().some((a) => a.startsWith('athena:')));
    expect(athena).toHaveLength(1);
    expect([athena[0]!.Action].flat().sort()).toEqual([
      'athena:GetQueryExecution',
      'athena:GetQueryResults',
      'athena:StartQueryExecution',
    ]);
    expect(JSON.stringify(athena[0]!.Resource)).toMatch(/workgroup\/".*ArchiveWorkGroup/);
    const glue = actionsOf(statements).filter((a) => a.startsWith('glue:'));
    expect(glue.sort()).toEqual(['glue:GetDatabase', 'glue:GetPartitions', 'glue:GetTable']);
    expect(objectPatterns(statements, 's3:DeleteObject').sort()).toEqual([`${ERASURE_STAGING_PREFIX}*`, 'events/*']);
    expect(objectPatterns(statements, 's3:PutObject').sort()).toEqual([
      `${ERASURE_STAGING_PREFIX}*`,
      'events/*',
      'results/*',
    ]);
    const eventsListing = statements.find(
      (st) => [st.Action].flat().includes('s3:ListBucket') && st.Condition !== undefined,
    )!;
    expect(eventsListing.Condition).toEqual({
      StringLike: { 's3:prefix': ['events/*', `${ERASURE_STAGING_PREFIX}*`] },
    });
  });

  it('is the only function that may query Athena or delete from the archive, and cdk-nag finds nothing', () => {
    const holders = resources(app, 'AWS::IAM::Policy')
      .filter(([, p]) =>
        (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some((st) =>
          [st.Action].flat().some((a) => a.startsWith('athena:') || a === 's3:DeleteObject'),
        ),
      )
      .map(([id]) => id);
    // Firehose's destination roles clean up after failed uploads (the L2's grant, lib/archive.ts).
    expect(holders.filter((id) => !/DestinationRole|Delivery/.test(id))).toEqual([
      expect.stringMatching(/^operations/),
    ]);
    expect(app.nagViolations()).toEqual([]);
  });
});
