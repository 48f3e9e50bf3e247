import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { mcpOriginProblem, originList } from '../../lambdas/domain/auth/origin.js';
import { parseConfig } from '../../lib/config.js';
import { ensureAppBuilt } from '../../app/build.js';
import { startTestService } from '../support/local.js';
import { synth } from '../infra/synth.js';

/** The MCP transport's Origin check against DNS rebinding (docs/mcp.md, "Origin"). */

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } },
};

describe('mcpOriginProblem', () => {
  const allowed = originList('https://stats.example.com, http://localhost:6274,not a url');
  it.each([
    [undefined, true],
    ['https://stats.example.com', true],
    ['HTTPS://STATS.EXAMPLE.COM', true],
    ['https://stats.example.com:443', true],
    ['http://localhost:6274', true],
    ['http://stats.example.com', false],
    ['https://stats.example.com:8443', false],
    ['https://evil.example', false],
    ['https://stats.example.com.evil.example', false],
    ['null', false],
    ['', false],
    ['file://', false],
  ] as const)('Origin %s allowed: %s', (origin, ok) => {
    expect(mcpOriginProblem(origin, allowed) === null).toBe(ok);
  });
  it('keeps only web origins of the list', () => {
    expect(allowed).toEqual(['https://stats.example.com', 'http://localhost:6274']);
  });
});

describe('/mcp on the local server refuses a foreign Origin with 403, before the key', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'origin.test' }], { app: true, sessionizeIntervalMs: 0 });
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'mcp', new Date())).key;
  });
  afterAll(async () => svc.cleanup());

  const call = (headers: Record<string, string>) =>
    fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${key}`,
        ...headers,
      },
      body: JSON.stringify(INITIALIZE),
    });

  it('no Origin (a desktop client) and the app’s own origin pass; any other is 403', async () => {
    const port = new URL(svc.url).port;
    for (const origin of [undefined, svc.url, `http://localhost:${port}`]) {
      const res = await call(origin ? { origin } : {});
      expect(res.status, String(origin)).toBe(200);
      expect(((await res.json()) as { result?: unknown }).result, String(origin)).toBeDefined();
    }
    for (const origin of ['https://evil.example', `http://rebound.example:${port}`, 'null', `http://localhost:1`]) {
      const res = await call({ origin });
      expect(res.status, origin).toBe(403);
      expect(await res.json(), origin).toEqual({ error: expect.stringContaining('may not use this MCP endpoint') });
    }
    // Checked before the key: a rebinding page has no key, and learns nothing about keys either.
    const noKey = await call({ origin: 'https://evil.example', authorization: 'Bearer ff_wrong' });
    expect(noKey.status).toBe(403);
  });
});

describe('the stack gives the MCP function the app origin and -c mcpOrigins', () => {
  it('parses the context list', () => {
    expect(parseConfig({ mcpOrigins: 'https://a.example, http://localhost:6274' }).mcpOrigins).toEqual([
      'https://a.example',
      'http://localhost:6274',
    ]);
    expect(parseConfig({}).mcpOrigins).toEqual([]);
    expect(() => parseConfig({ mcpOrigins: 'https://a.example/path' })).toThrow(/mcpOrigins/);
    expect(() => parseConfig({ mcpOrigins: 'ftp://a.example' })).toThrow(/mcpOrigins/);
  });

  it('sets APP_ORIGINS to the listed origins', async () => {
    await ensureAppBuilt(() => {});
    const s = synth({ config: { app: true, mcpOrigins: ['https://agent.example.com'] }, bundle: false });
    // The distribution routes /mcp to the function's URL: its domain in the function's environment would be a cycle.
    const fns = s.template.findResources('AWS::Lambda::Function') as Record<
      string,
      { Properties: { Description?: string; Environment?: { Variables: Record<string, unknown> } } }
    >;
    const mcp = Object.values(fns).find((f) => f.Properties.Description?.startsWith('MCP server'));
    expect(mcp?.Properties.Environment?.Variables.APP_ORIGINS).toBe('https://agent.example.com');
    expect(s.nagViolations()).toEqual([]);
  }, 180_000);
});
