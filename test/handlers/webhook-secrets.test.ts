import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stripe } from 'stripe';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { fixture } from '../payments/fixture.js';
import { startTestService } from '../support/local.js';

const SECRET = 'whsec_footfall_sealed_secret_test';
const NOW = Date.UTC(2026, 2, 2, 10, 20);

type Service = Awaited<ReturnType<typeof startTestService>>;

/**
 * Webhook signing secrets are sealed at rest (`docs/security.md` "Webhook signing secrets at rest"),
 * bound to their site and provider; items written before, with a plaintext
 * `secret`, keep working until the provider is connected again.
 */
describe('webhook secrets at rest', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startTestService(
      [
        { domain: 'example.com', timezone: 'UTC' },
        { domain: 'other.org', timezone: 'UTC' },
      ],
      { clock: () => NOW },
    );
  });
  afterAll(async () => svc.cleanup());

  const item = async (domain: string) =>
    (
      await svc.dynamo.doc.send(
        new GetCommand({ TableName: svc.dynamo.table, Key: { [PK]: `PROVIDER#${domain}`, [SK]: 'stripe' } }),
      )
    ).Item!;
  const putItem = (domain: string, fields: Record<string, unknown>) =>
    svc.dynamo.doc.send(
      new PutCommand({
        TableName: svc.dynamo.table,
        Item: {
          [PK]: `PROVIDER#${domain}`,
          [SK]: 'stripe',
          type: 'PROVIDER',
          connected: new Date(NOW).toISOString(),
          ...fields,
        },
      }),
    );
  const deliver = (domain: string) => {
    const body = fixture('stripe', 'payment_intent.succeeded.json');
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: Math.floor(NOW / 1000),
    });
    return fetch(`${svc.url}/api/webhooks/stripe/${domain}`, {
      method: 'POST',
      headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
      body,
    });
  };

  it('stores only the sealed secret, and verifies webhooks with it', async () => {
    await new DynamoConfigStore(svc.dynamo, svc.secrets).connectProvider(
      'example.com',
      'stripe',
      SECRET,
      new Date(NOW),
    );
    const stored = await item('example.com');
    expect(stored.secret).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(JSON.parse(String(stored.sealed_secret))).toMatchObject({ v: 1, local: true });
    expect((await deliver('example.com')).status).toBe(200);
  });

  it("does not open a sealed secret copied to another site's item: 503, nothing verified", async () => {
    await putItem('other.org', { sealed_secret: (await item('example.com')).sealed_secret });
    const res = await deliver('other.org');
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain(SECRET);
  });

  it('still reads a plaintext secret written before sealing, and seals it when the provider is connected again (migration)', async () => {
    await putItem('other.org', { secret: SECRET });
    expect((await deliver('other.org')).status).toBe(200);
    expect(await new DynamoConfigStore(svc.dynamo, svc.secrets).providerSecret('other.org', 'stripe')).toBe(SECRET);

    await new DynamoConfigStore(svc.dynamo, svc.secrets).connectProvider('other.org', 'stripe', SECRET, new Date(NOW));
    const resealed = await item('other.org');
    expect(resealed.secret).toBeUndefined();
    expect(resealed.sealed_secret).toEqual(expect.any(String));
    expect((await deliver('other.org')).status).toBe(200);
  });

  it('refuses to store a secret without a box to seal it', async () => {
    await expect(
      new DynamoConfigStore(svc.dynamo).connectProvider('example.com', 'stripe', SECRET, new Date(NOW)),
    ).rejects.toThrow(/SecretBox/);
    expect(JSON.stringify(await item('example.com'))).not.toContain(SECRET);
  });
});
