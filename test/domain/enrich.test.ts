import { describe, expect, it } from 'vitest';
import { enrichEvent } from '../../lambdas/domain/enrich.js';
import { parseUserAgent } from '../../lambdas/domain/user-agent.js';
import { trackedEventSchema } from '../../lambdas/domain/tracked-event.js';
import { CHROME_UA, site } from '../support/events.js';

const request = {
  now: Date.UTC(2026, 5, 1),
  ip: '198.51.100.4',
  userAgent: CHROME_UA,
  agent: parseUserAgent(CHROME_UA),
  country: 'DE',
  language: 'de',
};

describe('enrichEvent output fits the tracked-event schema', () => {
  // An event that enrichment keeps but the sessionizer and the archive reject as malformed is a lost event.
  it.each([
    [
      'a 2,000-character ref (utm_source fallback, unknown → the source)',
      `https://example.com/?ref=${'a'.repeat(2000)}`,
    ],
    ['a 300-character utm_source', `https://example.com/?utm_source=${'b'.repeat(300)}`],
    ['a 256-character utm_source', `https://example.com/?utm_source=${'c'.repeat(256)}`],
  ])('%s', (_name, u) => {
    const result = enrichEvent({
      event: { n: 'pageview', u, s: 'example.com' },
      site: site(),
      request,
      salt: 'salt',
      eventId: 'e1',
      withinRateLimit: () => true,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(() => trackedEventSchema.parse(result.event)).not.toThrow();
    expect(result.event.source?.length).toBe(253);
  });
});
