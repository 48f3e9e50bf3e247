import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { openLocalDynamo, startMemoryDynalite } from '../../local/dynalite.js';
import { dynaliteIteratorBases } from '../../local/dynalite-iterators.js';

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

  const servers = {
    'on disk (classic-level)': async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ff-dynalite-'));
      const db = await openLocalDynamo(dir, 'cli');
      return { endpoint: db.endpoint, close: async () => (await db.close(), await rm(dir, { recursive: true, force: true })) };
    },
    'in memory (memory-level)': () => startMemoryDynalite(),
  };

  it.each(Object.keys(servers))('%s', async (name) => {
    const server = await servers[name as keyof typeof servers]();
    const conn = createDynamoConnection({ table: 'iterators', endpoint: server.endpoint, maxAttempts: 1 });
    cleanups.push(async () => (conn.doc.destroy(), await server.close()));
    await ensureTable(conn);
    for (let i = 0; i < 20; i++) await conn.doc.send(new PutCommand({ TableName: conn.table, Item: { pk: `p${i % 2}`, sk: `s${i}` } }));

    const closes = dynaliteIteratorBases().map((base) => vi.spyOn(base, 'close'));
    const closed = () => closes.reduce((n, spy) => n + spy.mock.calls.length, 0);
    // Cut short by Limit (the stream is destroyed mid-way) and read to the end.
    for (let i = 0; i < 30; i++) {
      const page = await conn.doc.send(new QueryCommand({ TableName: conn.table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'p0' }, Limit: 1 }));
      expect(page.Items).toHaveLength(1);
    }
    for (let i = 0; i < 10; i++) {
      const page = await conn.doc.send(new QueryCommand({ TableName: conn.table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'p1' } }));
      expect(page.Items).toHaveLength(10);
    }
    for (let i = 0; i < 10; i++) await conn.doc.send(new ScanCommand({ TableName: conn.table, Limit: 3 }));
    await vi.waitFor(() => expect(closed()).toBeGreaterThanOrEqual(50));
  });
});
