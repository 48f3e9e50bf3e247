import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoConnection, type DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { startMemoryDynalite } from '../../local/dynalite.js';
import { runCliInProcess } from '../support/cli.js';

describe('footfall --aws: admin commands against a deployed table', () => {
  let db: { endpoint: string; close(): Promise<void> };
  let conn: DynamoConnection;
  beforeAll(async () => {
    db = await startMemoryDynalite();
    conn = createDynamoConnection({ table: 'FootfallStack-Table', endpoint: db.endpoint });
    await ensureTable(conn);
  });
  afterAll(async () => {
    conn.doc.destroy();
    await db.close();
  });

  // The SDK reads the endpoint, region and credentials from the environment, as it would on an operator's machine.
  const aws = (...args: string[]) =>
    runCliInProcess(['--aws', '--table', 'FootfallStack-Table', ...args], {
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_REGION: 'eu-central-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      FOOTFALL_DATA: '/nonexistent',
    });

  it("creates the first account, site and key in the stack's table", async () => {
    expect((await aws('accounts', 'add', 'acme')).status).toBe(0);
    expect((await aws('sites', 'add', 'example.com', '--timezone', 'UTC', '--account', 'acme')).status).toBe(0);
    const key = await aws('--json', 'keys', 'create', '--account', 'acme');
    expect(key.status, key.stderr).toBe(0);
    expect(JSON.parse(key.stdout).key).toMatch(/^ff_/);
    expect(await new DynamoConfigStore(conn).getSite('example.com')).toMatchObject({
      account: 'acme',
      timezone: 'UTC',
    });
  });

  it('needs --table, and refuses commands that only work on local data', async () => {
    const noTable = await runCliInProcess(['--aws', 'sites', 'list'], { FOOTFALL_TABLE: '' });
    expect(noTable.status).toBe(2);
    expect(noTable.stderr).toContain('--table');
    const local = await aws('sessionize');
    expect(local.status).toBe(2);
    expect(local.stderr).toContain('local data directory only');
  });
});
