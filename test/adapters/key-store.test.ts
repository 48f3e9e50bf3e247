import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { KEY_USE_UPDATE } from '../../lib/functions.js';
import { memoryTable, scanAll } from '../support/dynamo.js';

const at = (iso: string) => new Date(iso);

/**
 * A key's last_used (`docs/app.md` "Settings: API keys") is the report and MCP functions' only write,
 * and IAM lets it through only as KEY_USE_UPDATE allows (`docs/security.md` "IAM: least privilege"): the
 * store must stay within that grant, or every authenticated request would fail in AWS.
 */
describe('DynamoKeyStore.authenticate records last_used (dynalite)', () => {
  let db: Awaited<ReturnType<typeof memoryTable>>;
  let conn: DynamoConnection;
  beforeAll(async () => {
    db = await memoryTable([]);
    conn = db.conn;
  });
  afterAll(async () => db.close());

  it('writes last_used on first use, not again within 5 minutes, again after', async () => {
    const store = new DynamoKeyStore(conn);
    const created = await store.create('acme', 'laptop', at('2026-05-01T10:00:00Z'));
    expect((await store.info(created.id))?.last_used).toBeNull();
    expect(await store.authenticate(created.key, at('2026-05-01T10:01:00Z'))).toBe('acme');
    expect((await store.info(created.id))?.last_used).toBe('2026-05-01T10:01:00.000Z');
    await store.authenticate(created.key, at('2026-05-01T10:05:59Z'));
    expect((await store.info(created.id))?.last_used).toBe('2026-05-01T10:01:00.000Z');
    await store.authenticate(created.key, at('2026-05-01T10:06:00Z'));
    expect((await store.info(created.id))?.last_used).toBe('2026-05-01T10:06:00.000Z');
  });

  it('does not recreate a key information item that is gone', async () => {
    const store = new DynamoKeyStore(conn);
    const created = await store.create('acme', 'gone', at('2026-05-01T10:00:00Z'));
    await conn.doc.send(new DeleteCommand({ TableName: conn.table, Key: { pk: 'KEYS', sk: created.id } }));
    expect(await store.authenticate(created.key, at('2026-05-01T11:00:00Z'))).toBe('acme');
    expect((await scanAll(conn)).filter((i) => i.pk === 'KEYS' && i.sk === created.id)).toEqual([]);
  });

  it('writes only what the report and MCP functions are granted: UpdateItem on KEYS, of last_used, returning nothing', async () => {
    const store = new DynamoKeyStore(conn);
    const created = await store.create('acme', 'watched', at('2026-05-01T10:00:00Z'));
    const send = vi.spyOn(conn.doc, 'send');
    try {
      await store.authenticate(created.key, at('2026-05-01T12:00:00Z'));
      await store.authenticate('ff_not-a-key', at('2026-05-01T12:00:00Z'));
      const commands = send.mock.calls.map(
        ([command]) => command as { constructor: { name: string }; input: Record<string, unknown> },
      );
      const writes = commands.filter((c) => c.constructor.name !== 'GetCommand');
      expect(writes).toHaveLength(1);
      const [write] = writes;
      expect(write).toBeInstanceOf(UpdateCommand);
      const input = write!.input as {
        Key: Record<string, string>;
        UpdateExpression: string;
        ConditionExpression: string;
        ExpressionAttributeNames?: unknown;
        ReturnValues?: string;
      };
      expect(KEY_USE_UPDATE.partitions).toContain(input.Key.pk);
      // Every attribute name the request uses is last_used or a key attribute (dynamodb:Attributes).
      const names = `${input.UpdateExpression} ${input.ConditionExpression}`
        .match(/(?<![:#\w])[a-z_]+\b(?!\()/g)!
        .filter((w) => !['SET', 'attribute_exists'].includes(w));
      expect(new Set(names)).toEqual(new Set(['last_used', 'pk']));
      expect(names.every((n) => [...KEY_USE_UPDATE.attributes, 'pk', 'sk'].includes(n))).toBe(true);
      expect(input.ExpressionAttributeNames).toBeUndefined();
      expect(input.ReturnValues).toBe('NONE');
    } finally {
      send.mockRestore();
    }
  });
});
