import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stripe } from 'stripe';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { PROVIDER_MODULES, WebhookSignatureError } from '../../lambdas/domain/payments/providers/index.js';
import { fixture } from './fixture.js';
import { startTestService } from '../support/local.js';

/**
 * The `stripe-signature` header is read as the `stripe` package reads it, and
 * any header the package and our age check could read differently is refused:
 * a genuine signature of an old delivery cannot be passed off as new by
 * adding a fresh `t=` in front of, behind or beside it.
 */
const stripe = PROVIDER_MODULES.stripe;
const SECRET = 'whsec_header_test';
const NOW = Date.UTC(2026, 2, 2, 10, 20, 0);
const NOW_S = NOW / 1000;
const OLD_S = NOW_S - 365 * 86_400;
const body = fixture('stripe', 'charge.succeeded.json');
const sig = (t: number) => createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');

// [case, header, error message or null for accepted]
const FORMS: Array<[string, string, string | null]> = [
  ['a fresh delivery', `t=${NOW_S},v1=${sig(NOW_S)}`, null],
  [
    'a fresh delivery with a v0 part and a rotated second v1',
    `t=${NOW_S},v1=${'0'.repeat(64)},v1=${sig(NOW_S)},v0=ab`,
    null,
  ],
  ['an old delivery', `t=${OLD_S},v1=${sig(OLD_S)}`, 'webhook timestamp too old'],
  ['two t=, the old one last', `t=${NOW_S},t=${OLD_S},v1=${sig(OLD_S)}`, 'malformed webhook signature'],
  ['two t=, the old one first', `t=${OLD_S},t=${NOW_S},v1=${sig(OLD_S)}`, 'malformed webhook signature'],
  ['the old t= after the signature', `t=${NOW_S},v1=${sig(OLD_S)},t=${OLD_S}`, 'malformed webhook signature'],
  ['a leading space before a fresh t=', `t=${OLD_S},v1=${sig(OLD_S)}, t=${NOW_S}`, 'malformed webhook signature'],
  ['a leading space on the header', ` t=${NOW_S},v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['a trailing space after t', `t=${NOW_S} ,v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['an empty part', `t=${NOW_S},,v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['a trailing comma', `t=${NOW_S},v1=${sig(NOW_S)},`, 'malformed webhook signature'],
  ['a t with trailing letters', `t=${NOW_S}abc,v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['a hexadecimal t', `t=0x${NOW_S.toString(16)},v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['an upper-case T', `T=${NOW_S},v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['no t', `v1=${sig(NOW_S)}`, 'malformed webhook signature'],
  ['a part with two =', `t=${NOW_S},v1=${sig(NOW_S)}=`, 'malformed webhook signature'],
  ['no v1', `t=${NOW_S},v0=${sig(NOW_S)}`, 'webhook signature does not match'],
  ['garbage', 'nonsense', 'malformed webhook signature'],
];

describe('stripe-signature header forms', () => {
  it.each(FORMS)('%s', (_case, header, message) => {
    const call = () => stripe.verify(body, { 'stripe-signature': header }, SECRET, NOW);
    if (message === null) {
      expect(call()).toEqual(JSON.parse(body));
      return;
    }
    expect(call).toThrow(WebhookSignatureError);
    expect(call).toThrow(message);
  });
});

describe('replaying an old subscription event after a newer one', () => {
  type Service = Awaited<ReturnType<typeof startTestService>>;
  let svc: Service;
  /** The fixtures' subscription: created (active), updated (past_due), deleted (canceled), in that order of `created`. */
  const CUSTOMER = 'cus_QXg1o8vcGmoR32';
  const SUB = 'sub_1Pgc6rB7WZ01zgkWNy0Cn5nw';
  const AT = Date.UTC(2026, 4, 20, 16, 0);
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com', timezone: 'UTC' }], { clock: () => AT });
    await new DynamoConfigStore(svc.dynamo, svc.secrets).connectProvider('example.com', 'stripe', SECRET, new Date());
  });
  afterAll(async () => svc.cleanup());

  const deliver = (name: string, header: (payload: string) => string) => {
    const payload = fixture('stripe', name);
    return fetch(`${svc.url}/api/webhooks/stripe/example.com`, {
      method: 'POST',
      headers: { 'stripe-signature': header(payload), 'content-type': 'application/json' },
      body: payload,
    });
  };
  const signedAt = (t: number) => (payload: string) =>
    Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: t });
  const status = async () =>
    (await dynamoPaymentStores(svc.dynamo).customers.getCustomer('example.com', 'stripe', CUSTOMER))?.subscriptions[SUB]
      ?.status;

  it('keeps the newer status, whether the old event comes freshly signed or with a forged fresh t=', async () => {
    const nowS = Math.floor(AT / 1000);
    expect((await deliver('customer.subscription.created.json', signedAt(nowS))).status).toBe(200);
    expect(await status()).toBe('active');
    expect((await deliver('customer.subscription.deleted.json', signedAt(nowS))).status).toBe(200);
    expect(await status()).toBe('canceled');
    // The same older event delivered again, validly signed now (Stripe retries for days): ordered by its `created`.
    expect((await deliver('customer.subscription.updated.json', signedAt(nowS))).status).toBe(200);
    expect((await deliver('customer.subscription.created.json', signedAt(nowS))).status).toBe(200);
    expect(await status()).toBe('canceled');
    // A captured delivery signed a year ago, with a fresh t= put before its own: refused, nothing stored.
    const yearAgo = nowS - 365 * 86_400;
    const forged = await deliver('customer.subscription.created.json', (payload) => {
      const genuine = signedAt(yearAgo)(payload);
      return `t=${nowS},${genuine}`;
    });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: 'malformed webhook signature' });
    expect(await status()).toBe('canceled');
  });
});
