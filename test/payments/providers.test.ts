import { describe, expect, it } from 'vitest';
import { FootfallError } from '../../lambdas/domain/errors.js';
import { PROVIDERS } from '../../lambdas/domain/payments/facts.js';
import {
  PROVIDER_MODULES,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../lambdas/domain/payments/providers/index.js';
import { fixture } from './fixture.js';

describe('PROVIDER_MODULES', () => {
  it('has one module per provider, each naming itself', () => {
    expect(Object.keys(PROVIDER_MODULES).sort()).toStrictEqual([...PROVIDERS].sort());
    for (const p of PROVIDERS) expect(PROVIDER_MODULES[p].provider).toBe(p);
  });

  it('errors are typed 400s with messages safe to show', () => {
    const signature = new WebhookSignatureError(
      'webhook signature does not match',
      'No signatures found matching the expected signature',
    );
    const payload = new WebhookPayloadError('stripe', 'charge.succeeded', 'amount: expected number');
    expect(signature).toBeInstanceOf(FootfallError);
    expect(payload).toBeInstanceOf(FootfallError);
    expect([signature.status, payload.status]).toStrictEqual([400, 400]);
    expect(signature.publicMessage).toBe('webhook signature does not match');
    expect(payload.publicMessage).toBe('webhook payload does not match the expected schema');
  });

  it('no module accepts a delivery with none of its headers', () => {
    const body = fixture('stripe', 'charge.succeeded.json');
    for (const p of PROVIDERS) {
      expect(() => PROVIDER_MODULES[p].verify(body, {}, 'secret', Date.now()), p).toThrow(WebhookSignatureError);
    }
  });
});
