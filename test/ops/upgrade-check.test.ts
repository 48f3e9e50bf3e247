import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { main } from '../../cli/main.js';
import { DATA_LAYOUT } from '../../lambdas/domain/site.js';
import { compareVersions, upgradePlan } from '../../lambdas/domain/upgrade.js';
import { RELEASE_VERSION } from '../../lib/release.js';
import { site } from '../support/events.js';

const cfn = mockClient(CloudFormationClient);
const dynamo = mockClient(DynamoDBDocumentClient);
// The class mocks stub every client's `send`: later files sharing this process need the real one back.
afterAll(() => {
  cfn.restore();
  dynamo.restore();
});

const stackWith = (outputs: Record<string, string>) => ({
  Stacks: [
    {
      StackName: 'Footfall',
      CreationTime: new Date(0),
      StackStatus: 'UPDATE_COMPLETE' as const,
      Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
    },
  ],
});
const siteItem = (domain: string, o: Record<string, unknown> = {}) => ({
  pk: 'SITES',
  sk: `SITE#${domain}`,
  ...site({ domain }),
  ...o,
});

describe('footfall upgrade check --aws: the deployed stack and every site read through the SDK', () => {
  let out: string[];
  beforeEach(() => {
    cfn.reset();
    dynamo.reset();
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => vi.restoreAllMocks());
  const check = async (...args: string[]) => {
    const status = await main(['--aws', '--table', 'Footfall-Table', '--json', 'upgrade', 'check', ...args]);
    return { status, plan: JSON.parse(out.join('')) };
  };

  it("reads the stack's Version and DataLayout outputs and each site's layout, and names the sites to rebuild", async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'Prod' }).resolves(stackWith({ Version: '0.0.9', DataLayout: '1' }));
    dynamo.on(QueryCommand).resolves({
      Items: [
        siteItem('old.example', {}),
        siteItem('new.example', { layout: DATA_LAYOUT }),
        siteItem('mid.example', { layout: DATA_LAYOUT }),
      ],
    });
    const { status, plan } = await check('--stack', 'Prod');
    expect(status).toBe(0);
    expect(cfn.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'Prod' });
    expect(dynamo.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({ TableName: 'Footfall-Table' });
    expect(plan).toMatchObject({
      from: { version: '0.0.9', layout: 1 },
      to: { version: RELEASE_VERSION, layout: DATA_LAYOUT },
      safe: true,
    });
    expect(plan.notes).toEqual([
      `upgrade from 0.0.9 to ${RELEASE_VERSION}`,
      `the storage layout changes from 1 to ${DATA_LAYOUT}`,
      '1 site to rebuild after the deploy',
    ]);
    expect(plan.sites.map((s: { domain: string; action: string }) => [s.domain, s.action])).toEqual([
      ['old.example', 'rebuild'],
      ['new.example', 'ok'],
      ['mid.example', 'ok'],
    ]);
    expect(plan.sites[0].notes[0]).toContain('answer 503 until `footfall rebuild --site old.example`');
  });

  it('refuses (exit 1) a downgrade and a deploy while a rebuild runs; a stack without the outputs is read as unknown', async () => {
    cfn.on(DescribeStacksCommand).resolves(stackWith({ Version: '99.0.0', DataLayout: String(DATA_LAYOUT) }));
    dynamo.on(QueryCommand).resolves({ Items: [siteItem('a.example', { layout: DATA_LAYOUT, building: 3 })] });
    const refused = await check();
    expect(refused.status).toBe(1);
    expect(refused.plan.safe).toBe(false);
    expect(refused.plan.notes[0]).toContain('a downgrade is not supported');
    expect(refused.plan.sites[0]).toMatchObject({ action: 'block' });

    out = [];
    cfn.on(DescribeStacksCommand).resolves(stackWith({ TableName: 'x' }));
    dynamo.on(QueryCommand).resolves({ Items: [] });
    const unknown = await check();
    expect(unknown.status).toBe(0);
    expect(unknown.plan.from).toEqual({ version: null, layout: null });
  });

  it('refuses (exit 1) a plain deploy onto a stack that still ingests through its Kinesis stream, and passes with --drain-stream; a draining stack is told when to drop the flag', async () => {
    const current = { Version: RELEASE_VERSION, DataLayout: String(DATA_LAYOUT) };
    dynamo.on(QueryCommand).resolves({ Items: [] });
    cfn.on(DescribeStacksCommand).resolves(stackWith({ ...current, StreamName: 'Footfall-Events' }));
    const plain = await check();
    expect(plain.status).toBe(1);
    expect(plain.plan).toMatchObject({ safe: false, from: { ingestion: 'stream' } });
    expect(plain.plan.notes.join('\n')).toContain('npx cdk deploy -c drainStream=true');

    out = [];
    const draining = await check('--drain-stream');
    expect(draining.status).toBe(0);
    expect(draining.plan.safe).toBe(true);
    expect(draining.plan.notes.join('\n')).toContain('deploy without the flag 24 hours later');

    out = [];
    cfn
      .on(DescribeStacksCommand)
      .resolves(stackWith({ ...current, StreamName: 'Footfall-Events', IngestStreamName: 'Footfall-Ingest' }));
    const both = await check();
    expect(both.status).toBe(0);
    expect(both.plan).toMatchObject({ safe: true, from: { ingestion: 'draining' } });
    expect(both.plan.notes.join('\n')).toContain('keep the flag until 24 hours after the deploy that set it');

    out = [];
    cfn.on(DescribeStacksCommand).resolves(stackWith({ ...current, IngestStreamName: 'Footfall-Ingest' }));
    const done = await check();
    expect(done.plan).toMatchObject({ safe: true, from: { ingestion: 'delivery' } });
    expect(done.plan.notes.join('\n')).not.toContain('Kinesis');
  });

  it('a missing stack is an error of its own, before the table is read', async () => {
    cfn.on(DescribeStacksCommand).rejects(new Error('Stack with id Nope does not exist'));
    expect(await main(['--aws', '--table', 'T', 'upgrade', 'check', '--stack', 'Nope'])).toBe(1);
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(0);
    expect(await main(['--aws', '--table', 'T', 'upgrade', 'check', '--stack', '1bad name'])).toBe(2);
  });
});

describe('upgradePlan', () => {
  it('orders releases numerically', () => {
    expect(compareVersions('0.10.0', '0.9.1')).toBe(1);
    expect(compareVersions('1.0.0', '1.0')).toBe(0);
    expect(compareVersions('0.1.0', '0.1.1')).toBe(-1);
  });
  it('blocks a site whose data is newer than the release reads, and a retired generation asks for a rebuild', () => {
    const plan = upgradePlan(
      null,
      [site({ layout: DATA_LAYOUT + 1 }), site({ domain: 'b.example', retired: 0, layout: DATA_LAYOUT })],
      {
        version: '1.0.0',
        layout: DATA_LAYOUT,
      },
    );
    expect(plan.safe).toBe(false);
    expect(plan.sites.map((s) => s.action)).toEqual(['block', 'rebuild']);
  });
});
