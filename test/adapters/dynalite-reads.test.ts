import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { openLocalDynamo, startMemoryDynalite } from '../../local/dynalite.js';
import { dynaliteStoreClasses } from '../../local/dynalite-reads.js';

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

  const servers = {
    'on disk (classic-level)': async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ff-dynalite-reads-'));
      // An admin command's dynalite runs in this thread, so the spies below see its reads.
      const db = await openLocalDynamo(dir, 'cli');
      return {
        endpoint: db.endpoint,
        credentials: db.credentials,
        close: async () => (await db.close(), await rm(dir, { recursive: true, force: true })),
      };
    },
    'in memory (memory-level)': async () => ({ ...(await startMemoryDynalite()), credentials: undefined }),
  };

  it.each(Object.keys(servers))('%s', async (name) => {
    const server = await servers[name as keyof typeof servers]();
    const conn = createDynamoConnection({
      table: 'reads',
      endpoint: server.endpoint,
      credentials: server.credentials,
      maxAttempts: 1,
    });
    cleanups.push(async () => (conn.doc.destroy(), await server.close()));
    await ensureTable(conn);
    const table = conn.table;
    const reads = dynaliteStoreClasses().map(({ prototype }) => vi.spyOn(prototype, '_getSync' as never));
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
