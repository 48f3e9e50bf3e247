import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { DynamoSaltStore } from '../../lambdas/adapters/dynamo/salt-store.js';
import { TTL_ATTRIBUTE } from '../../lambdas/adapters/dynamo/table.js';
import { hashApiKey } from '../../lambdas/domain/api-key.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import { TRACKED_EVENT_COLUMNS, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { CHROME_UA, site } from '../support/events.js';
import { startTestService } from '../support/local.js';

/** Claims of `docs/security.md` that no other test checks. */

describe('what is stored about a visitor', () => {
  it('no raw IP: the IP is in no field of the enriched event, and the archive has no column for it', async () => {
    const written: TrackedEvent[] = [];
    const handler = createEventHandler({
      logger: new Logger({ serviceName: 'security', logLevel: 'SILENT' }),
      metrics: new Metrics({ namespace: 'Security', serviceName: 'security' }),
      clock: () => Date.UTC(2026, 2, 10, 12),
      sites: { getSite: async (d) => (d === 'example.com' ? site() : null) },
      salts: { saltFor: async () => 'the-day-salt' },
      stream: { put: async (events) => void written.push(...events) },
      limiter: new SiteRateLimiter(),
    });
    const ip = '203.0.113.77';
    const body = JSON.stringify([
      { n: 'pageview', u: 'https://example.com/a', s: 'example.com' },
      { n: 'pageview', u: 'https://example.com/b', s: 'example.com', v: 'tracker-id-0001' },
    ]);
    const res = await handler(
      httpApiEvent({
        method: 'POST',
        path: '/api/event',
        headers: { 'user-agent': CHROME_UA, 'x-forwarded-for': ip },
        body,
        sourceIp: ip,
      }),
      localContext('event'),
    );
    expect(res.statusCode).toBe(202);
    expect(written).toHaveLength(2);
    for (const event of written) expect(JSON.stringify(event)).not.toContain(ip);
    // Without `v`, the visitor is the daily hash of salt, site, IP and User-Agent.
    expect(written[0]?.visitor_id).toMatch(/^h-[0-9a-f]{32}$/);
    expect(written[0]?.visitor_kind).toBe('hash');
    expect(TRACKED_EVENT_COLUMNS.map((c) => c.name).filter((n) => /ip|addr|forwarded/i.test(n))).toEqual([]);
  });

  it('daily salts: a new day deletes salts older than yesterday, and each carries a TTL two days after its day', async () => {
    const db = await memoryTable();
    try {
      const salts = new DynamoSaltStore(db.conn);
      const first = await salts.saltFor('2026-03-01');
      await new DynamoSaltStore(db.conn).saltFor('2026-03-02');
      await new DynamoSaltStore(db.conn).saltFor('2026-03-03');
      const items = (await scanAll(db.conn)).filter((i) => i.pk === 'SALT');
      expect(items.map((i) => i.sk)).toEqual(['2026-03-02', '2026-03-03']);
      for (const item of items)
        expect(item[TTL_ATTRIBUTE]).toBe(Date.parse(`${String(item.sk)}T00:00:00Z`) / 1000 + 2 * 86_400);
      expect(items.some((i) => i.salt === first)).toBe(false);
    } finally {
      await db.close();
    }
  });
});

describe('API keys', () => {
  it('are ff_ and 32 random bytes in base64url, and the table holds only their SHA-256', async () => {
    const db = await memoryTable();
    try {
      const created = await new DynamoKeyStore(db.conn).create('acme', 'docs', new Date());
      expect(created.key).toMatch(/^ff_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(created.key.slice(3), 'base64url')).toHaveLength(32);
      const table = JSON.stringify(await scanAll(db.conn));
      expect(table).not.toContain(created.key);
      expect(table).not.toContain(created.key.slice(3));
      expect(table).toContain(hashApiKey(created.key));
      expect(hashApiKey(created.key)).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await db.close();
    }
  });
});

describe('CORS', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let key = '';
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com' }], { app: true, sessionizeIntervalMs: 0 });
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'cors', new Date())).key;
  });
  afterAll(async () => svc.cleanup());

  it('allows any origin on the event endpoint only: not on the report API, MCP or webhooks', async () => {
    const origin = { origin: 'https://evil.example' };
    const event = await fetch(`${svc.url}/api/event`, {
      method: 'POST',
      headers: { ...origin, 'user-agent': CHROME_UA },
      body: JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' }),
    });
    expect(event.status).toBe(202);
    expect(event.headers.get('access-control-allow-origin')).toBe('*');
    const others = await Promise.all([
      fetch(`${svc.url}/api/v1/sites`, { headers: { ...origin, authorization: `Bearer ${key}` } }),
      fetch(`${svc.url}/api/v1/sites`, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'GET' },
      }),
      fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: {
          ...origin,
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      }),
      fetch(`${svc.url}/api/webhooks/stripe/example.com`, { method: 'POST', headers: origin, body: '{}' }),
    ]);
    // MCP refuses a foreign Origin outright (DNS rebinding, docs/mcp.md "Origin"); none of them allows it by CORS.
    expect(others.map((r) => r.status)).toEqual([200, 405, 403, 404]);
    for (const r of others) expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});
