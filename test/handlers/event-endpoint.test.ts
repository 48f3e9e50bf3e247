import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { trackedEventSchema, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { localPaths } from '../../local/service.js';
import { CHROME_UA } from '../support/events.js';
import { startTestService } from '../support/local.js';
import { MAX_BODY_BYTES } from '../../lambdas/domain/inbound.js';

type Service = Awaited<ReturnType<typeof startTestService>>;

describe('POST /api/event through the local service: statuses, silent drops and errors', () => {
  let svc: Service;
  let offset = 0;
  const now = Date.UTC(2026, 10, 21, 10, 30);

  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com' }, { domain: 'limited.org', rate_limit: 1 }], {
      clock: () => now,
    });
  });
  afterAll(async () => svc.cleanup());

  async function post(body: unknown, headers: Record<string, string> = {}) {
    return fetch(`${svc.url}/api/event`, {
      method: 'POST',
      headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  /** Events written to the stream since the last call. */
  async function written(): Promise<TrackedEvent[]> {
    const { records, nextOffset } = await readLocalStream(localPaths(svc.dataDir).stream, offset, 10_000);
    offset = nextOffset;
    return records.map((r) => trackedEventSchema.parse(JSON.parse(r.data.toString())));
  }

  it('accepts a page view with 202, empty body, CORS, and writes it enriched', async () => {
    const res = await post(
      {
        n: 'pageview',
        u: 'https://www.example.com/pricing?utm_source=hn&utm_campaign=launch',
        s: 'example.com',
        r: 'https://news.ycombinator.com/item?id=1',
        v: 'abcdefgh-1234',
        w: 390,
      },
      { 'cf-ipcountry': 'de', 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' },
    );
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const [event, ...rest] = await written();
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      site: 'example.com',
      ts: now,
      type: 'pageview',
      goal: null,
      visitor_id: 'abcdefgh-1234',
      visitor_kind: 'id',
      hostname: 'www.example.com',
      path: '/pricing',
      referrer_host: 'news.ycombinator.com',
      channel: 'Communities',
      source: 'Hacker News',
      utm_source: 'hn',
      utm_campaign: 'launch',
      country: 'DE',
      language: 'de-DE',
      browser: 'Chrome',
      os: 'macOS',
      device: 'Mobile',
      screen_width: 390,
    });
    expect(event?.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('accepts any content type, including base64-encoded binary ones', async () => {
    const body = { n: 'pageview', u: 'https://example.com/', s: 'example.com' };
    expect((await post(body, { 'content-type': 'application/octet-stream' })).status).toBe(202);
    expect((await post(body, { 'content-type': 'application/json' })).status).toBe(202);
    expect(await written()).toHaveLength(2);
  });

  it('uses the daily hash when v is missing or invalid, stable within the day', async () => {
    await post([
      { n: 'pageview', u: 'https://example.com/a', s: 'example.com' },
      { n: 'pageview', u: 'https://example.com/b', s: 'example.com', v: 'bad id!' },
    ]);
    const [a, b] = await written();
    expect(a?.visitor_kind).toBe('hash');
    expect(a?.visitor_id).toBe(b?.visitor_id);
    expect(a?.visitor_id).toMatch(/^[A-Za-z0-9-]{8,64}$/);
  });

  it('takes the first 50 events of an array and ignores the rest', async () => {
    const batch = Array.from({ length: 60 }, (_, i) => ({
      n: 'pageview',
      u: `https://example.com/${i}`,
      s: 'example.com',
    }));
    expect((await post(batch)).status).toBe(202);
    const events = await written();
    expect(events.map((e) => e.path)).toEqual(batch.slice(0, 50).map((_, i) => `/${i}`));
  });

  it('drops silently with 202: bot, empty UA, unknown site, foreign host, goal without name, unknown n', async () => {
    const page = { n: 'pageview', u: 'https://example.com/', s: 'example.com' };
    const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    expect((await post(page, { 'user-agent': bot })).status).toBe(202);
    expect((await post(page, { 'user-agent': '' })).status).toBe(202);
    expect((await post({ ...page, s: 'nosuchsite.com', u: 'https://nosuchsite.com/' })).status).toBe(202);
    expect((await post({ ...page, u: 'https://evil.com/' })).status).toBe(202);
    expect((await post({ ...page, u: 'https://notexample.com/' })).status).toBe(202);
    expect((await post({ ...page, n: 'goal' })).status).toBe(202);
    expect((await post({ ...page, n: 'goal', g: '   ' })).status).toBe(202);
    expect((await post({ ...page, n: 'click' })).status).toBe(202);
    expect(await written()).toEqual([]);
  });

  it('keeps a goal with its trimmed name and an outbound link', async () => {
    await post({
      n: 'goal',
      g: '  Outbound Link: Click ',
      l: 'https://github.com/x',
      u: 'https://app.example.com/',
      s: 'example.com',
    });
    const [goal] = await written();
    expect(goal).toMatchObject({
      type: 'goal',
      goal: 'Outbound Link: Click',
      link: 'https://github.com/x',
      hostname: 'app.example.com',
    });
  });

  it('applies the per-site rate limit silently', async () => {
    const batch = Array.from({ length: 5 }, () => ({ n: 'pageview', u: 'https://limited.org/', s: 'limited.org' }));
    expect((await post(batch)).status).toBe(202);
    // Rate 1/s with a 2 s burst: two pass, the clock stands still, the rest are dropped.
    expect(await written()).toHaveLength(2);
  });

  it.each([
    ['not JSON', '{oops'],
    ['an empty array', '[]'],
    [
      'an object without n, u and s',
      JSON.stringify({ name: 'pageview', url: 'https://example.com/', domain: 'example.com' }),
    ],
  ])('answers 400 invalid event for %s, with CORS', async (_name, body) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('invalid event');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a body over the ceiling (50 events of maximal fields) with 413 and CORS, and writes nothing', async () => {
    const res = await post(
      JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com', r: 'x'.repeat(MAX_BODY_BYTES) }),
    );
    expect(res.status).toBe(413);
    expect(await res.text()).toBe('request too large');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await written()).toEqual([]);
  });

  it("answers a body past the server's 1 MiB read limit with 413 and CORS", async () => {
    const res = await post('x'.repeat(1024 * 1024 + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers %s with 405, Allow and CORS', async (method) => {
    const res = await fetch(`${svc.url}/api/event`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.text()).toBe('method not allowed');
  });

  it('answers the CORS preflight', async () => {
    const res = await fetch(`${svc.url}/api/event`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('serves /health and /v.js, and answers 404 for the report API and MCP without --app', async () => {
    const health = await fetch(`${svc.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('ok');
    const script = await fetch(`${svc.url}/v.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(script.headers.get('cache-control')).toContain('max-age=86400');
    const etag = script.headers.get('etag');
    expect(etag).toBeTruthy();
    expect((await script.text()).length).toBeGreaterThan(100);
    const cached = await fetch(`${svc.url}/v.js`, { headers: { 'if-none-match': etag ?? '' } });
    expect(cached.status).toBe(304);
    expect((await fetch(`${svc.url}/api/v1/sites`)).status).toBe(404);
    expect((await fetch(`${svc.url}/mcp`, { method: 'POST' })).status).toBe(404);
  });
});
