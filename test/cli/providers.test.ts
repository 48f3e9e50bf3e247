import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { LOCAL_SECRET_KEY_FILE, LocalSecretBox } from '../../lambdas/adapters/secrets/local-secret-box.js';
import { openLocalStore } from '../../local/service.js';
import { runCli } from '../support/cli.js';

const SECRET = 'whsec_cli_sealed_secret_0123456789';

/** `footfall providers connect` seals the secret (issue 18.5, `docs/security.md`). */
describe('footfall providers connect', () => {
  let dataDir = '';
  const cli = (...args: string[]) => runCli(['--data', dataDir, ...args]);
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'secrets-cli-'));
    expect(cli('accounts', 'add', 'acme').status).toBe(0);
    expect(cli('sites', 'add', 'shop.test', '--timezone', 'UTC', '--account', 'acme').status).toBe(0);
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('stores the secret sealed with the data directory\'s key (0600), which the webhook path opens', async () => {
    const connected = cli('--json', 'providers', 'connect', 'paddle', '--site', 'shop.test', '--webhook-secret', SECRET);
    expect(connected.status, connected.stderr).toBe(0);
    expect((await stat(join(dataDir, LOCAL_SECRET_KEY_FILE))).mode & 0o777).toBe(0o600);
    const { dynamo, db } = await openLocalStore(dataDir, 'cli');
    try {
      const { Item } = await dynamo.doc.send(new GetCommand({ TableName: dynamo.table, Key: { [PK]: 'PROVIDER#shop.test', [SK]: 'paddle' } }));
      expect(JSON.stringify(Item)).not.toContain(SECRET);
      expect(await new DynamoConfigStore(dynamo, await LocalSecretBox.open(dataDir)).providerSecret('shop.test', 'paddle')).toBe(SECRET);
    } finally {
      dynamo.doc.destroy();
      await db.close();
    }
  });

  it('with --aws, asks for the stack\'s KMS key before touching the table', () => {
    const res = runCli(['--aws', '--table', 'FootfallStack-Table', 'providers', 'connect', 'stripe', '--site', 'shop.test', '--webhook-secret', SECRET]);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('--kms-key');
  });
});
