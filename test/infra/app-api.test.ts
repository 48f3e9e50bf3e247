import { beforeAll, describe, expect, it } from 'vitest';
import { APP_WRITE_PARTITIONS, FUNCTIONS } from '../../lib/functions.js';
import { synth, type Synthesized } from './synth.js';

type Statement = {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The app's API in AWS (`docs/app.md` "In AWS"): its own function behind the HTTP API, with least-privilege access to the table. */
describe('the app API function (context app=true)', () => {
  let on: Synthesized;
  let off: Synthesized;
  beforeAll(() => {
    on = synth({ config: { app: true }, bundle: false });
    off = synth({ config: { app: false }, bundle: false });
  });

  const routeKeys = (s: Synthesized) =>
    Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map((r) => String(r.Properties.RouteKey));

  it('routes every method of /api/app/{proxy+} to it in app mode only', () => {
    expect(
      routeKeys(on)
        .filter((k) => k.includes('/api/app'))
        .sort(),
    ).toEqual(['DELETE', 'GET', 'PATCH', 'POST', 'PUT'].map((m) => `${m} /api/app/{proxy+}`));
    expect(routeKeys(off).filter((k) => k.includes('/api/app'))).toEqual([]);
    on.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: FUNCTIONS.app.description,
      MemorySize: 1024,
      Timeout: 60,
      Runtime: 'nodejs22.x',
    });
  });

  it('may read the table and write only its own partitions: no Scan, no rollups, salts, stream markers or FX', () => {
    const [, policy] = Object.entries(on.template.findResources('AWS::IAM::Policy')).find(([id]) =>
      id.startsWith('appRole'),
    )!;
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('dynamodb:')),
    );
    const read = statements.find((s) => asArray(s.Action).includes('dynamodb:GetItem'))!;
    const write = statements.find((s) => asArray(s.Action).includes('dynamodb:PutItem'))!;
    expect(statements).toHaveLength(2);
    expect(asArray(read.Action).sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    expect(read.Condition).toBeUndefined();
    expect(asArray(write.Action).sort()).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    const leading = write.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[];
    expect(leading).toEqual([...APP_WRITE_PARTITIONS]);
    for (const pk of ['R#shop.test#visits', 'SALT', 'SHARD#shardId-000', 'FX', 'REBUILD#shop.test']) {
      expect(
        leading.some((p) => new RegExp(`^${p.replace(/[.#]/g, '\\$&').replace(/\*/g, '.*')}$`).test(pk)),
        pk,
      ).toBe(false);
    }
    // Deleting a site (the danger zone): its webhook log and the deletion's record.
    for (const pk of [
      'USER#ana@acme.test',
      'SESSION#ab12',
      'SITES',
      'APIKEY#ff',
      'PAY#shop.test',
      'WEBHOOK#shop.test',
      'SITE_DELETIONS',
    ]) {
      expect(
        leading.some((p) => new RegExp(`^${p.replace(/[.#]/g, '\\$&').replace(/\*/g, '.*')}$`).test(pk)),
        pk,
      ).toBe(true);
    }
    expect(statements.flatMap((s) => asArray(s.Action))).not.toContain('dynamodb:Scan');
    for (const s of statements) expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] });
  });

  it('keeps the other functions as they were and the stack free of unacknowledged cdk-nag findings', () => {
    const [, report] = Object.entries(on.template.findResources('AWS::IAM::Policy')).find(([id]) =>
      id.startsWith('reportRole'),
    )!;
    const actions = (report.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap((s) =>
      asArray(s.Action),
    ).filter((a) => a.startsWith('dynamodb:'));
    // Reads, and the two narrow updates, a key's last_used and a look at a site (their conditions:
    // test/infra/least-privilege.test.ts).
    expect(actions.sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'dynamodb:UpdateItem',
    ]);
    expect(on.nagViolations().filter((v) => v.resources.some((r) => r.includes('/app/')))).toEqual([]);
  });
});
