import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { LOCAL_SECRET_KEY_FILE, LocalSecretBox } from '../../lambdas/adapters/secrets/local-secret-box.js';
import { openLocalStore } from '../../local/service.js';
import { runCliInProcess } from '../support/cli.js';

const SECRET = 'whsec_cli_sealed_secret_0123456789';

/** `footfall providers connect` seals the secret (`docs/security.md` "Webhook signing secrets at rest"). */
describe('footfall providers connect', async () => {
  let dataDir = '';
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'secrets-cli-'));
    expect((await cli('accounts', 'add', 'acme')).status).toBe(0);
    expect((await cli('sites', 'add', 'shop.test', '--timezone', 'UTC', '--account', 'acme')).status).toBe(0);
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it("stores the secret sealed with the data directory's key (0600), which the webhook path opens", async () => {
    const connected = await cli(
      '--json',
      'providers',
      'connect',
      'paddle',
      '--site',
      'shop.test',
      '--webhook-secret',
      SECRET,
    );
    expect(connected.status, connected.stderr).toBe(0);
    // No server runs on the data directory: the URL is the one `serve` would take (PORT unset: 8787).
    expect(JSON.parse(connected.stdout)).toEqual({
      provider: 'paddle',
      site: 'shop.test',
      webhook_path: '/api/webhooks/paddle/shop.test',
      webhook_url: 'http://127.0.0.1:8787/api/webhooks/paddle/shop.test',
    });
    expect((await stat(join(dataDir, LOCAL_SECRET_KEY_FILE))).mode & 0o777).toBe(0o600);
    const { dynamo, db } = await openLocalStore(dataDir, 'cli');
    try {
      const { Item } = await dynamo.doc.send(
        new GetCommand({ TableName: dynamo.table, Key: { [PK]: 'PROVIDER#shop.test', [SK]: 'paddle' } }),
      );
      expect(JSON.stringify(Item)).not.toContain(SECRET);
      expect(
        await new DynamoConfigStore(dynamo, await LocalSecretBox.open(dataDir)).providerSecret('shop.test', 'paddle'),
      ).toBe(SECRET);
    } finally {
      dynamo.doc.destroy();
      await db.close();
    }
  });

  it("prints the real webhook URL: the local server's, or --url's, never a placeholder like https://<your host>/", async () => {
    const local = await cli('providers', 'connect', 'polar', '--site', 'shop.test', '--webhook-secret', SECRET);
    expect(local).toMatchObject({
      status: 0,
      stdout: 'polar connected to shop.test: point its webhook at http://127.0.0.1:8787/api/webhooks/polar/shop.test\n',
    });
    const given = await cli(
      'providers',
      'connect',
      'polar',
      '--site',
      'shop.test',
      '--webhook-secret',
      SECRET,
      '--url',
      'https://stats.example.com/',
    );
    expect(given).toMatchObject({
      status: 0,
      stdout:
        'polar connected to shop.test: point its webhook at https://stats.example.com/api/webhooks/polar/shop.test\n',
    });
  });

  it('with --aws, secrets reseal asks for the KMS key it moves secrets from before touching the table', async () => {
    const res = await runCliInProcess(['--aws', '--table', 'FootfallStack-Table', 'secrets', 'reseal']);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('--kms-key');
  });
});
