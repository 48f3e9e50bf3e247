import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, KEY_USE_UPDATE, PAYMENT_WRITE_PARTITIONS, REPORT_READ_PARTITIONS } from '../../lib/functions.js';
import { synth, type Synthesized } from './synth.js';

type Statement = {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const READ = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const WRITE = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** Whether IAM's StringLike patterns let a partition key through (`*` any characters). */
const allows = (patterns: readonly string[] | null, pk: string) =>
  patterns === null ||
  patterns.some((p) => new RegExp(`^${p.replace(/[.#]/g, '\\$&').replace(/\*/g, '.*')}$`).test(pk));

/**
 * Each function's DynamoDB access is scoped to the partitions it
 * reads and writes (`dynamodb:LeadingKeys`); the report and MCP functions
 * cannot read the webhook signing secrets (PROVIDER#), and their only writes are
 * a key's `last_used` (UpdateItem on `KEYS`, that attribute alone) and, with filtered reports (the default),
 * a look at a site (UpdateItem on `LOOKS`: `looked`, `wanted` and the TTL).
 */
describe('least privilege on the table, per function (context app=true)', () => {
  let on: Synthesized;
  beforeAll(() => {
    on = synth({ config: { app: true }, bundle: false });
  });

  /** An update-only statement (UpdateItem without PutItem): its partitions, attributes and return values. */
  type Update = {
    actions: string[];
    partitions: string[];
    attributes: string[];
    returnValues: unknown;
    conditions: string[];
  };
  /** A function's DynamoDB grants: the partitions it may read and write (null: table-wide; [] for none), its update-only statements, and every action it has. */
  function access(name: string): {
    read: string[] | null;
    write: string[] | null;
    readActions: string[];
    writeActions: string[];
    updates: Update[];
    allActions: string[];
  } {
    const [, policy] = Object.entries(on.template.findResources('AWS::IAM::Policy')).find(([id]) =>
      id.startsWith(`${name}Role`),
    )!;
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('dynamodb:')),
    );
    const of = (action: string) => statements.find((s) => asArray(s.Action).includes(action));
    const keys = (s: Statement | undefined) =>
      s ? ((s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[] | undefined) ?? null) : [];
    for (const s of statements) expect(s.Effect).toBe('Allow');
    const updates = statements
      .filter(
        (s) => asArray(s.Action).includes('dynamodb:UpdateItem') && !asArray(s.Action).includes('dynamodb:PutItem'),
      )
      .map((s) => ({
        actions: asArray(s.Action),
        partitions: keys(s) ?? ['*'],
        attributes: [
          ...((s.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes'] as string[] | undefined) ?? ['*']),
        ].sort(),
        returnValues: s.Condition?.['StringEqualsIfExists']?.['dynamodb:ReturnValues'],
        conditions: Object.keys(s.Condition ?? {}).sort(),
      }));
    return {
      read: keys(of('dynamodb:GetItem')),
      write: keys(of('dynamodb:PutItem')),
      readActions: asArray(of('dynamodb:GetItem')?.Action ?? []).sort(),
      writeActions: asArray(of('dynamodb:PutItem')?.Action ?? []).sort(),
      updates,
      allActions: [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort(),
    };
  }

  it.each([
    ['event', ['SITES', 'SALT'], ['SALT']],
    // Its last step credits again the payments of the visitors it wrote (`docs/payments.md` "Customers and attribution"): payment items and FX rates.
    [
      'sessionize',
      ['SITES', 'FX', 'R#*', 'RT#*', 'SHARD#*', 'INGEST', ...PAYMENT_WRITE_PARTITIONS],
      ['R#*', 'RT#*', 'SHARD#*', 'INGEST', ...PAYMENT_WRITE_PARTITIONS],
    ],
    ['report', [...REPORT_READ_PARTITIONS], []],
    ['mcp', [...REPORT_READ_PARTITIONS], []],
    [
      'webhook',
      ['SITES', 'PROVIDER#*', 'FX', ...PAYMENT_WRITE_PARTITIONS, 'WEBHOOK#*'],
      [...PAYMENT_WRITE_PARTITIONS, 'WEBHOOK#*'],
    ],
    // R#: rollups and their delta log, which the scheduled run compacts.
    // EMAILREPORTS#: the recipients it mails and the markers of what it sent; IMPORTED#: the imported days its reports add.
    [
      'scheduled',
      ['SITES', 'FX', 'R#*', ...PAYMENT_WRITE_PARTITIONS, 'EMAILREPORTS#*', 'IMPORTED#*'],
      ['R#*', ...PAYMENT_WRITE_PARTITIONS, 'EMAILREPORTS#*'],
    ],
    // A provider history import begun in the app: what settling payments reads and writes, and its job item.
    [
      'imports',
      ['SITES', 'FX', ...PAYMENT_WRITE_PARTITIONS, 'IMPORTJOB#*'],
      [...PAYMENT_WRITE_PARTITIONS, 'IMPORTJOB#*'],
    ],
  ])('%s reads and writes only its own partitions', (name, read, write) => {
    const a = access(name);
    expect(a.readActions).toEqual(READ);
    expect(a.read?.sort()).toEqual([...new Set(read)].sort());
    expect(a.write?.sort()).toEqual([...write].sort());
    expect(a.writeActions).toEqual(write.length > 0 ? WRITE : []);
    expect(a.updates.length).toBe(name === 'report' || name === 'mcp' ? 2 : 0);
  });

  it.each(['report', 'mcp'])(
    "%s cannot read a webhook secret, and its only writes are a key's last_used and a look",
    (name) => {
      const a = access(name);
      expect(allows(a.read, 'PROVIDER#shop.test')).toBe(false);
      expect(a.writeActions).toEqual([]);
      // One write action in all its statements: UpdateItem, on KEYS items of last_used and on LOOKS items of a look (and
      // the key attributes IAM requires), returning nothing.
      expect(a.allActions.filter((action) => WRITE.includes(action))).toEqual(['dynamodb:UpdateItem']);
      expect(a.updates).toEqual([
        {
          actions: ['dynamodb:UpdateItem'],
          partitions: ['KEYS'],
          attributes: ['last_used', 'pk', 'sk'],
          returnValues: 'NONE',
          conditions: ['ForAllValues:StringEquals', 'ForAllValues:StringLike', 'StringEqualsIfExists'],
        },
        {
          actions: ['dynamodb:UpdateItem'],
          partitions: ['LOOKS'],
          // Not `refreshed`, which the operations function writes: a look cannot say its refresh is done.
          attributes: ['expires_at', 'looked', 'pk', 'sk', 'wanted'],
          returnValues: 'NONE',
          conditions: ['ForAllValues:StringEquals', 'ForAllValues:StringLike', 'StringEqualsIfExists'],
        },
      ]);
      expect(KEY_USE_UPDATE.attributes).toEqual(['last_used']);
      // So it cannot forge or revive a key (hash, account, revoked), nor touch any other partition.
      for (const attribute of ['hash', 'account', 'revoked', 'name', 'id'])
        expect(a.updates[0]!.attributes, attribute).not.toContain(attribute);
      for (const pk of ['APIKEY#0a1b', 'PROVIDER#shop.test', 'SITES', 'USER#ana@acme.test', 'SESSION#0a1b'])
        expect(allows(a.updates[0]!.partitions, pk), pk).toBe(false);
      // What it needs to answer a request is within reach.
      for (const pk of [
        'SITES',
        'APIKEY#0a1b',
        'SESSION#0a1b',
        'USER#ana@acme.test',
        'R#shop.test#visits',
        'PR#shop.test#totals',
        'VIS#shop.test#v-1',
        'PAY#shop.test',
        'CUST#shop.test',
        'FX',
      ]) {
        expect(allows(a.read, pk), pk).toBe(true);
      }
    },
  );

  it('leaves the webhook secrets (PROVIDER#) to the webhook function, the app function that connects providers and the operations function that deletes them with their site', () => {
    const readers = Object.keys(FUNCTIONS).filter((name) =>
      Object.keys(on.template.findResources('AWS::IAM::Policy')).some((id) => id.startsWith(`${name}Role`)),
    );
    const canRead = readers.filter((name) => {
      const a = access(name);
      return a.readActions.length > 0 && allows(a.read, 'PROVIDER#shop.test');
    });
    expect(canRead.sort()).toEqual(['app', 'operations', 'webhook']);
    expect(access('webhook').write?.some((p) => allows([p], 'PROVIDER#shop.test'))).toBe(false);
    // The operations function reads them sealed only: no Parameter Store grant opens them (docs/security.md).
    expect(access('operations').allActions.filter((action) => action.startsWith('ssm:'))).toEqual([]);
  });

  it('stays free of unacknowledged cdk-nag findings', () => {
    expect(on.nagViolations()).toEqual([]);
  });
});
