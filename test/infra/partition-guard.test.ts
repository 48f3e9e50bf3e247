import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import { FUNCTIONS } from '../../lib/functions.js';
import { requestPartitions } from '../../local/iam/partition-guard.js';
import { functionPolicies, loadPolicies } from '../../local/iam/policies.js';
import { LOCAL_ARNS, LOCAL_REPORT_SENDER, authorizer, tableArn } from '../../local/iam/authorizer.js';
import { evaluate } from '../../local/iam/evaluate.js';
import { synth, type Synthesized } from './synth.js';

/**
 * The local twin enforces `local/iam/policies.json` (`local/iam/partition-guard.ts`): it must be each
 * function's identity policy as `cdk synth -c app=true` produces it, so a grant changed in the stack
 * and not regenerated (`npm run iam:policies`) fails here, and one regenerated reaches every suite.
 */
describe('local/iam/policies.json is the synthesized policy of every function', () => {
  let synthesized: Synthesized;
  beforeAll(async () => {
    // The app's stack serves the built app: a fresh clone has none until a test builds it.
    await ensureAppBuilt(() => {});
    synthesized = synth({
      config: { app: true, reportSender: LOCAL_REPORT_SENDER, filteredReports: true },
      bundle: false,
    });
  });

  it('equals a fresh synth', () => {
    const fresh = functionPolicies(
      synthesized.template.toJSON() as Parameters<typeof functionPolicies>[0],
      Object.keys(FUNCTIONS),
    );
    expect(loadPolicies()).toEqual(fresh);
  });
});

const table = tableArn('footfall');
const get = (pk: string) => ({
  action: 'dynamodb:GetItem',
  resource: table,
  context: { 'dynamodb:LeadingKeys': [pk] },
});

describe("each function's policy as the twin evaluates it", () => {
  it.each([
    ['report', 'CH#shop.test', true],
    ['report', 'CM#shop.test', true],
    ['report', 'IMPORTJOB#shop.test', false],
    ['report', 'PROVIDER#shop.test', false],
    ['webhook', 'PROVIDER#shop.test', true],
    ['sessionize', 'RPM#shop.test', true],
    ['event', 'PAY#shop.test', false],
    ['app', 'SALT', true],
  ])('%s GetItem on %s: %s', (fn, pk, allowed) => {
    expect(authorizer(fn)(get(pk))).toBe(allowed);
  });

  it('writes: LeadingKeys of each function', () => {
    const put = (pk: string) => ({ ...get(pk), action: 'dynamodb:PutItem' });
    expect(authorizer('webhook')(put('CP#shop.test'))).toBe(true);
    expect(authorizer('webhook')(put('R#shop.test#visits'))).toBe(false);
    expect(authorizer('app')(put('SALT'))).toBe(false);
    expect(authorizer('report')(put('KEYS'))).toBe(false);
  });

  it("the report function's one update: KEYS, last_used alone, no return values", () => {
    const update = (pk: string, attributes: string[], returnValues?: string) => ({
      action: 'dynamodb:UpdateItem',
      resource: table,
      context: {
        'dynamodb:LeadingKeys': [pk],
        'dynamodb:Attributes': attributes,
        ...(returnValues ? { 'dynamodb:ReturnValues': [returnValues] } : {}),
      },
    });
    const allow = authorizer('report');
    expect(allow(update('KEYS', ['pk', 'sk', 'last_used']))).toBe(true);
    expect(allow(update('KEYS', ['pk', 'sk', 'last_used'], 'NONE'))).toBe(true);
    expect(allow(update('KEYS', ['pk', 'sk', 'last_used'], 'ALL_OLD'))).toBe(false);
    expect(allow(update('KEYS', ['pk', 'sk', 'last_used', 'revoked']))).toBe(false);
    expect(allow(update('APIKEY#h', ['pk', 'sk', 'last_used']))).toBe(false);
  });

  it('a scan names no leading key and is granted to no function', () => {
    for (const fn of ['event', 'sessionize', 'report', 'webhook', 'app', 'scheduled'])
      expect(authorizer(fn)({ action: 'dynamodb:Scan', resource: table, context: {} }), fn).toBe(false);
  });

  it('the secrets key pair: the webhook function alone reads private keys, the app function reads the public key and only creates private ones', () => {
    const { secretsPublicKey: pub, secretsPrivateKey: priv } = LOCAL_ARNS;
    const can = (fn: string, action: string, resource: string) => authorizer(fn)({ action, resource, context: {} });
    expect(can('webhook', 'ssm:GetParameter', priv)).toBe(true);
    expect(can('webhook', 'ssm:PutParameter', priv)).toBe(false);
    expect(can('webhook', 'ssm:GetParameter', pub)).toBe(false);
    expect(can('app', 'ssm:GetParameter', priv)).toBe(false);
    expect(can('app', 'ssm:PutParameter', priv)).toBe(true);
    expect(can('app', 'ssm:GetParameter', pub)).toBe(true);
    expect(can('app', 'ssm:PutParameter', pub)).toBe(true);
    for (const fn of ['event', 'sessionize', 'report', 'mcp', 'scheduled'])
      for (const resource of [pub, priv]) expect(can(fn, 'ssm:GetParameter', resource), fn).toBe(false);
  });
});

describe('condition operators as the IAM User Guide defines them', () => {
  const statement = (Condition: Record<string, Record<string, string | string[]>>) => [
    { Effect: 'Allow' as const, Action: ['dynamodb:*'], Resource: ['*'], Condition },
  ];
  const request = (context: Record<string, string[]>) => ({ action: 'dynamodb:GetItem', resource: table, context });

  it('ForAllValues holds for an absent key (the reason a Scan must not be granted)', () => {
    const s = statement({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*'] } });
    expect(evaluate(s, request({}))).toBe(true);
    expect(evaluate(s, request({ 'dynamodb:LeadingKeys': ['A#1'] }))).toBe(true);
    expect(evaluate(s, request({ 'dynamodb:LeadingKeys': ['B#1'] }))).toBe(false);
  });

  it('StringEqualsIfExists holds when absent; a plain operator does not; keys AND, values OR', () => {
    const s = statement({
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      StringLike: { 'dynamodb:LeadingKeys': ['A#*', 'B#*'] },
    });
    expect(evaluate(s, request({ 'dynamodb:LeadingKeys': ['B#1'] }))).toBe(true);
    expect(evaluate(s, request({ 'dynamodb:LeadingKeys': ['B#1'], 'dynamodb:ReturnValues': ['ALL_NEW'] }))).toBe(false);
    expect(evaluate(s, request({}))).toBe(false);
  });

  it('an explicit Deny wins; an unknown operator throws', () => {
    const s = [...statement({}), { Effect: 'Deny' as const, Action: ['dynamodb:GetItem'], Resource: ['*'] }];
    expect(evaluate(s, request({}))).toBe(false);
    expect(() => evaluate(statement({ DateGreaterThan: { 'aws:CurrentTime': '2020' } }), request({}))).toThrow(
      /not supported/,
    );
  });
});

describe('the partitions a request names', () => {
  it.each([
    [
      'PutCommand as PutItemCommand',
      'PutItemCommand',
      { Item: { pk: 'CP#s', sk: 'x' } },
      [['dynamodb:PutItem', 'CP#s']],
    ],
    [
      'a marshalled key',
      'GetItemCommand',
      { Key: { pk: { S: 'CH#s' }, sk: { S: 'x' } } },
      [['dynamodb:GetItem', 'CH#s']],
    ],
    [
      'a query by a named key attribute',
      'QueryCommand',
      {
        KeyConditionExpression: '#p = :v AND begins_with(sk, :s)',
        ExpressionAttributeNames: { '#p': 'pk' },
        ExpressionAttributeValues: { ':v': 'RPM#s', ':s': '1' },
      },
      [['dynamodb:Query', 'RPM#s']],
    ],
    [
      'each item of a batch write',
      'BatchWriteItemCommand',
      { RequestItems: { t: [{ PutRequest: { Item: { pk: 'CM#s' } } }, { DeleteRequest: { Key: { pk: 'CH#s' } } }] } },
      [
        ['dynamodb:BatchWriteItem', 'CM#s'],
        ['dynamodb:BatchWriteItem', 'CH#s'],
      ],
    ],
    ['a scan, which names no partition', 'ScanCommand', {}, [['dynamodb:Scan', '*']]],
  ])('%s', (_, command, input, expected) => {
    expect(requestPartitions(command, input).map((a) => [a.action, a.pk])).toEqual(expected);
  });

  it('a transaction: each item as its single-item action', () => {
    const input = {
      TransactItems: [
        { Put: { Item: { pk: 'CP#s', sk: 'a' } } },
        {
          Update: {
            Key: { pk: 'CH#s', sk: 'b' },
            UpdateExpression: 'SET #n = :v',
            ExpressionAttributeNames: { '#n': 'n' },
          },
        },
        { ConditionCheck: { Key: { pk: 'SITES', sk: 'c' }, ConditionExpression: 'attribute_exists(pk)' } },
      ],
    };
    expect(requestPartitions('TransactWriteItemsCommand', input).map((a) => [a.action, a.pk])).toEqual([
      ['dynamodb:PutItem', 'CP#s'],
      ['dynamodb:UpdateItem', 'CH#s'],
      ['dynamodb:ConditionCheckItem', 'SITES'],
    ]);
  });

  it("an update's attributes and return values", () => {
    const [access] = requestPartitions('UpdateItemCommand', {
      Key: { pk: 'KEYS', sk: 'k1' },
      UpdateExpression: 'SET last_used = :t, #r = if_not_exists(#r, :f)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#r': 'revoked' },
      ReturnValues: 'NONE',
    });
    expect(access!.attributes!.sort()).toEqual(['last_used', 'pk', 'revoked', 'sk']);
    expect(access!.returnValues).toBe('NONE');
  });
});
