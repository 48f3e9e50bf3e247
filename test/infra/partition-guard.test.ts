import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../lib/functions.js';
import { allowsPartition, requestPartitions, stringLike, type FunctionName } from '../../local/partition-guard.js';
import { synth, type Synthesized } from './synth.js';

type Statement = {
  Effect: string;
  Action: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
};
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];
/** One partition of every family the table holds (`docs/data-model.md`), and one of none. */
const PARTITIONS = [
  'SITES',
  'KEYS',
  'SALT',
  'FX',
  'EXPIRING',
  'APIKEY#h',
  'SESSION#h',
  'USER#a@b.c',
  'ACCOUNT#acme',
  'INVITE#h',
  'ATTEMPTS#a@b.c',
  'PROVIDER#shop.test',
  'WEBHOOK#shop.test',
  'SHARD#shard-1',
  'R#shop.test',
  'RT#shop.test',
  'VIS#shop.test#v1',
  'PAY#shop.test',
  'PAYID#shop.test',
  'CUST#shop.test',
  'PAYPENDING#shop.test',
  'PR#shop.test',
  'PL#shop.test',
  'PLR#shop.test',
  'PT#shop.test',
  'PU#shop.test',
  'PD#shop.test',
  'CP#shop.test',
  'CM#shop.test',
  'CH#shop.test',
  'RPM#shop.test',
  'REBUILD#shop.test',
  'NOPE#x',
];

/**
 * The local twin's guard (`local/partition-guard.ts`) decides as the synthesized policy
 * does: for every function, table action and partition family, the guard allows exactly
 * what some Allow statement of the function's role allows on `dynamodb:LeadingKeys`.
 * Together with the local service's per-function connections, a partition missing from
 * a function's list in `lib/functions.ts` fails the flows that need it in every suite.
 */
describe("the local partition guard matches each function's synthesized policy", () => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synth({ config: { app: true }, bundle: false });
  });

  /** Whether the function's synthesized role allows `action` on `pk` (its conditions on LeadingKeys only). */
  function policyAllows(name: string, action: string, pk: string): boolean {
    const policies = Object.entries(synthesized.template.findResources('AWS::IAM::Policy'))
      .filter(([id]) => id.startsWith(`${name}Role`))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    return policies.some((s) => {
      if (s.Effect !== 'Allow' || !asArray(s.Action).includes(action)) return false;
      const keys = s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[] | undefined;
      return keys === undefined || keys.some((pattern) => stringLike(pattern, pk));
    });
  }

  it.each(Object.keys(FUNCTIONS) as FunctionName[])('%s', (name) => {
    const disagreements: string[] = [];
    for (const action of ACTIONS)
      for (const pk of PARTITIONS)
        if (allowsPartition(FUNCTIONS[name], { action, pk }) !== policyAllows(name, action, pk))
          disagreements.push(`${action} ${pk}`);
    expect(disagreements).toEqual([]);
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

  it('a partition-scoped function cannot scan', () => {
    expect(allowsPartition(FUNCTIONS.webhook, { action: 'dynamodb:Scan', pk: '*' })).toBe(false);
  });
});
