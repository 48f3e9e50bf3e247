import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { createDynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { openLocalDynamo, startMemoryDynalite } from '../../local/dynalite.js';
import { dynaliteIteratorBases } from '../../local/dynalite-iterators.js';
import { dynaliteStoreClasses } from '../../local/dynalite-reads.js';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 as Sha256 } from '../../local/sigv4-check.js';

/**
 * A dynalite of each storage, with a table: on disk as an admin command runs it (in this thread, so spies on the
 * store see its calls), and in memory as tests run it.
 */
const servers = {
  'on disk (classic-level)': async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ff-dynalite-'));
    const db = await openLocalDynamo(dir, 'cli');
    return {
      endpoint: db.endpoint,
      credentials: db.credentials,
      close: async () => (await db.close(), await rm(dir, { recursive: true, force: true })),
    };
  },
  'in memory (memory-level)': async () => ({ ...(await startMemoryDynalite()), credentials: undefined }),
};

async function connect(name: string, table: string, cleanups: Array<() => Promise<void>>) {
  const server = await servers[name as keyof typeof servers]();
  const conn = createDynamoConnection({
    table,
    endpoint: server.endpoint,
    credentials: server.credentials,
    maxAttempts: 1,
  });
  cleanups.push(async () => (conn.doc.destroy(), await server.close()));
  await ensureTable(conn);
  return conn;
}

/**
 * dynalite 4.0.0 never closed the LevelDB iterator of a Query or Scan, so every
 * one pinned a snapshot until the process ended (`local/dynalite-iterators.ts`).
 * These count the iterators closed: without the shim the count stays 0.
 */
describe('local dynalite: Query and Scan close their iterators', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it.each(Object.keys(servers))('%s', async (name) => {
    const conn = await connect(name, 'iterators', cleanups);
    for (let i = 0; i < 20; i++)
      await conn.doc.send(new PutCommand({ TableName: conn.table, Item: { pk: `p${i % 2}`, sk: `s${i}` } }));

    const closes = dynaliteIteratorBases().map((base) => vi.spyOn(base, 'close'));
    const closed = () => closes.reduce((n, spy) => n + spy.mock.calls.length, 0);
    // Cut short by Limit (the stream is destroyed mid-way) and read to the end.
    for (let i = 0; i < 30; i++) {
      const page = await conn.doc.send(
        new QueryCommand({
          TableName: conn.table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': 'p0' },
          Limit: 1,
        }),
      );
      expect(page.Items).toHaveLength(1);
    }
    for (let i = 0; i < 10; i++) {
      const page = await conn.doc.send(
        new QueryCommand({
          TableName: conn.table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': 'p1' },
        }),
      );
      expect(page.Items).toHaveLength(10);
    }
    for (let i = 0; i < 10; i++) await conn.doc.send(new ScanCommand({ TableName: conn.table, Limit: 3 }));
    await vi.waitFor(() => expect(closed()).toBeGreaterThanOrEqual(50));
  });
});

/** Only the owner of a data directory reaches its dynalite (`docs/security.md` "Local mode: only the owner reaches the data"). */
describe('local dynalite: only the owner gets in', () => {
  it("refuses a client without the process's credential, and keeps the directory and the credential file private", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'ff-owner-')), 'data');
    const db = await openLocalDynamo(dir, 'serve');
    const { accessKeyId, secretAccessKey } = db.credentials;
    const owner = createDynamoConnection({
      table: 'private',
      endpoint: db.endpoint,
      credentials: db.credentials,
      maxAttempts: 1,
    });
    const stranger = createDynamoConnection({ table: 'private', endpoint: db.endpoint, maxAttempts: 1 });
    const guess = createDynamoConnection({
      table: 'private',
      endpoint: db.endpoint,
      credentials: { accessKeyId: 'FF000000000000000000000000', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    try {
      await ensureTable(owner);
      await owner.doc.send(
        new PutCommand({ TableName: owner.table, Item: { pk: 'PROVIDER#shop.test', sk: 'stripe', secret: 'whsec_x' } }),
      );
      for (const client of [stranger, guess]) {
        await expect(
          client.doc.send(
            new QueryCommand({
              TableName: client.table,
              KeyConditionExpression: 'pk = :p',
              ExpressionAttributeValues: { ':p': 'PROVIDER#shop.test' },
            }),
          ),
        ).rejects.toMatchObject({
          name: 'UnrecognizedClientException',
        });
        await expect(
          client.doc.send(
            new PutCommand({ TableName: client.table, Item: { pk: 'APIKEY#forged', sk: 'KEY', account: 'acme' } }),
          ),
        ).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
      }
      const items = await owner.doc.send(new ScanCommand({ TableName: owner.table }));
      expect(items.Items?.map((i) => i.pk)).toEqual(['PROVIDER#shop.test']);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      const holder = join(dir, 'dynalite.json');
      expect((await stat(holder)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(holder, 'utf8'))).toMatchObject({
        credentials: { accessKeyId, secretAccessKey },
      });
      // Admin commands attach to a running serve with this file's credential: test/cli/admin.test.ts runs them in other processes.
    } finally {
      owner.doc.destroy();
      stranger.doc.destroy();
      guess.doc.destroy();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('local dynalite: the SigV4 signature is checked, not just the key id', () => {
  it('refuses a wrong secret, a changed body, header or path, and a stale date as DynamoDB does; the signed request passes', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'ff-sig-')), 'data');
    const db = await openLocalDynamo(dir, 'cli');
    const owner = createDynamoConnection({
      table: 'sig',
      endpoint: db.endpoint,
      credentials: db.credentials,
      maxAttempts: 1,
    });
    const wrongSecret = createDynamoConnection({
      table: 'sig',
      endpoint: db.endpoint,
      credentials: { accessKeyId: db.credentials.accessKeyId, secretAccessKey: 'not-the-secret' },
      maxAttempts: 1,
    });
    try {
      await ensureTable(owner);
      await owner.doc.send(
        new PutCommand({ TableName: owner.table, Item: { pk: 'PROVIDER#shop.test', sk: 'stripe' } }),
      );
      await expect(wrongSecret.doc.send(new ScanCommand({ TableName: wrongSecret.table }))).rejects.toMatchObject({
        name: 'InvalidSignatureException',
        $metadata: { httpStatusCode: 400 },
      });
      await expect(
        wrongSecret.doc.send(
          new PutCommand({ TableName: wrongSecret.table, Item: { pk: 'APIKEY#forged', sk: 'KEY' } }),
        ),
      ).rejects.toMatchObject({ name: 'InvalidSignatureException' });

      // A request signed by the owner's key, replayed with one part changed.
      const url = new URL(db.endpoint);
      const signed = (date: Date, body: string) =>
        new SignatureV4({ credentials: db.credentials, region: 'local', service: 'dynamodb', sha256: Sha256 }).sign(
          {
            method: 'POST',
            protocol: 'http:',
            hostname: url.host,
            path: '/',
            headers: {
              host: url.host,
              'content-type': 'application/x-amz-json-1.0',
              'x-amz-target': 'DynamoDB_20120810.Scan',
            },
            body,
          },
          { signingDate: date },
        );
      const scan = JSON.stringify({ TableName: 'sig' });
      const send = async (headers: Record<string, string>, body: string, path = '/') => {
        const res = await fetch(`${db.endpoint}${path}`, { method: 'POST', headers, body });
        return { status: res.status, type: String(((await res.json()) as { __type?: string }).__type ?? 'ok') };
      };
      const good = (await signed(new Date(), scan)).headers as Record<string, string>;
      expect(await send(good, scan)).toEqual({ status: 200, type: 'ok' });
      const refused = { status: 400, type: 'com.amazonaws.dynamodb.v20120810#InvalidSignatureException' };
      expect(await send(good, JSON.stringify({ TableName: 'sig', Limit: 1 }))).toEqual(refused);
      expect(await send({ ...good, 'x-amz-target': 'DynamoDB_20120810.DeleteTable' }, scan)).toEqual(refused);
      expect(await send(good, scan, '/other')).toEqual(refused);
      const stale = (await signed(new Date(Date.now() - 16 * 60_000), scan)).headers as Record<string, string>;
      expect(await send(stale, scan)).toEqual(refused);
      const { authorization, ...unsigned } = good;
      expect(authorization).toContain(`Credential=${db.credentials.accessKeyId}/`);
      expect((await send(unsigned, scan)).status).toBe(400);
    } finally {
      owner.doc.destroy();
      wrongSecret.doc.destroy();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * dynalite's LevelDB reads run in its own thread with the store's `getSync`
 * (`local/dynalite-reads.ts`), with DynamoDB's answers unchanged: items read
 * back, missing ones absent, a failed condition refused, a new item's write
 * taken. Without the shim dynalite never calls `_getSync`, so the count stays 0.
 */
describe('local dynalite: LevelDB reads in the calling thread', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it.each(Object.keys(servers))('%s', async (name) => {
    const conn = await connect(name, 'reads', cleanups);
    const table = conn.table;
    const reads = dynaliteStoreClasses().map(({ prototype }) =>
      vi.spyOn(prototype as unknown as { _getSync: (...args: unknown[]) => unknown }, '_getSync'),
    );
    const count = () => reads.reduce((n, spy) => n + spy.mock.calls.length, 0);

    await conn.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: Array.from({ length: 5 }, (_, i) => ({ PutRequest: { Item: { pk: 'p', sk: `s${i}`, n: i } } })),
        },
      }),
    );
    // Each item written reads the table's description and the old item.
    expect(count()).toBeGreaterThanOrEqual(10);
    expect((await conn.doc.send(new GetCommand({ TableName: table, Key: { pk: 'p', sk: 's3' } }))).Item).toEqual({
      pk: 'p',
      sk: 's3',
      n: 3,
    });
    expect((await conn.doc.send(new GetCommand({ TableName: table, Key: { pk: 'p', sk: 'none' } }))).Item).toBe(
      undefined,
    );
    const guarded = (sk: string) =>
      conn.doc.send(
        new PutCommand({
          TableName: table,
          Item: { pk: 'p', sk, n: 99 },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    await expect(guarded('s1')).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    await guarded('s9');
    await conn.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: 'p', sk: 's9' },
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
    const back = await conn.doc.send(
      new GetCommand({ TableName: table, Key: { pk: 'p', sk: 's9' }, ConsistentRead: true }),
    );
    expect(back.Item).toEqual({ pk: 'p', sk: 's9', n: 100 });
    expect(count()).toBeGreaterThanOrEqual(20);
  });
});
