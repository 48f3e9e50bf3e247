import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { newApiKey } from '../../lambdas/domain/api-key.js';
import { DIMENSIONS } from '../../lambdas/domain/rollup.js';
import { createMcpHandler, type McpHandlerDeps } from '../../lambdas/handlers/mcp.js';
import { RETRY_MESSAGE } from '../../lambdas/handlers/mcp-tools.js';
import type { HttpEvent } from '../../lambdas/handlers/http.js';
import type { ReportHandlerDeps } from '../../lambdas/handlers/report.js';
import { createTelemetry } from '../../lambdas/observability/telemetry.js';
import { localContext } from '../../local/api-gateway.js';
import { site } from '../support/events.js';
import { startTestService } from '../support/local.js';
import { SITE, scenarioService } from '../reports/scenario.js';

type Scenario = Awaited<ReturnType<typeof scenarioService>>;

const TOOLS = [
  'list_sites',
  'get_overview',
  'get_timeseries',
  'get_breakdown',
  'list_properties',
  'get_goals',
  'get_realtime',
  'get_retention',
  'list_payments',
  'get_visitor_timeline',
];
const MARCH = { from: '2026-03-01', to: '2026-03-31' };
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'plain-fetch', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const text = (result: CallToolResult) => {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
};

describe('MCP endpoint /mcp on the hand-built scenario: tools, keys and errors', () => {
  let s: Scenario;
  let soloKey = '';
  let revokedKey = '';
  const clients: Client[] = [];

  beforeAll(async () => {
    s = await scenarioService();
    const config = new DynamoConfigStore(s.svc.dynamo);
    await config.addAccount('solo', new Date());
    await config.addSite(site({ domain: 'solo.test', timezone: 'America/New_York', account: 'solo' }));
    soloKey = (await s.keys.create('solo', 'mcp', new Date())).key;
    const revoked = await s.keys.create('acme', 'old', new Date());
    revokedKey = revoked.key;
    await s.keys.revoke(revoked.id, new Date());
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await s.svc.cleanup();
  });

  const transport = (key: string) =>
    new StreamableHTTPClientTransport(new URL(`${s.svc.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
  const connect = async (key = s.key) => {
    const client = new Client({ name: 'footfall-test', version: '1.0.0' });
    await client.connect(transport(key));
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const rest = async (path: string, key = s.key) => {
    const res = await s.get(path, key);
    expect(res.status, path).toBe(200);
    return res.json() as Promise<unknown>;
  };
  const post = (body: unknown, authorization?: string) =>
    fetch(`${s.svc.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });

  it('initializes statelessly: server info, tools capability, instructions, no session id', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'footfall' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toMatch(/list_sites/);
    const res = await post(INIT, `Bearer ${s.key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'footfall' } } });
  });

  it('lists the read-only tools with described input schemas and output schemas', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      for (const [prop, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${tool.name}.${prop}`).toMatch(/\w{3}/);
      }
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // `docs/api.md` "Overview": conversion is converted / visitors, not customers / visitors.
    expect(byName.get_overview?.description).toContain('conversion (converted / visitors');
    expect(byName.get_overview?.description).not.toContain('customers / visitors');
    const props = (name: string) =>
      byName[name]?.inputSchema.properties as Record<
        string,
        { enum?: string[]; type?: string; maximum?: number; anyOf?: Array<{ enum?: string[]; pattern?: string }> }
      >;
    expect(Object.keys(props('list_sites') ?? {})).toEqual([]);
    expect(Object.keys(props('get_overview'))).toEqual(['site', 'range', 'from', 'to', 'filters']);
    expect(props('get_overview').range?.enum).toEqual(['today', '7d', '30d', '90d', '12m', 'all']);
    // A dimension, or prop:<key> for a custom property (`docs/api.md`, "Breakdowns").
    expect(props('get_breakdown').dimension?.anyOf).toEqual([
      { type: 'string', enum: [...DIMENSIONS] },
      { type: 'string', pattern: expect.stringMatching(/^\^prop:/) },
    ]);
    expect(byName.get_breakdown?.inputSchema.required).toEqual(['dimension']);
    expect(props('get_breakdown').limit).toMatchObject({ maximum: 1000 });
    expect(Object.keys(props('list_properties'))).toEqual(['site', 'range', 'from', 'to', 'filters', 'limit']);
    expect(props('list_properties').limit).toMatchObject({ maximum: 1000 });
    expect(props('list_payments').filter?.enum).toEqual(['all', 'attributed', 'unattributed', 'refunded']);
    expect(props('list_payments').limit).toMatchObject({ maximum: 200 });
    expect(byName.get_visitor_timeline?.inputSchema.required).toEqual(['visitor_id']);
    expect(byName.get_overview?.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(props('get_timeseries'))).toEqual(['site', 'range', 'from', 'to', 'filters', 'interval']);
    expect(props('get_timeseries').interval?.enum).toEqual(['hour', 'day', 'month']);
    expect(Object.keys(props('get_goals'))).toEqual(['site', 'range', 'from', 'to', 'filters', 'goal', 'limit']);
  });

  it.each([
    ['list_sites', {}, '/api/v1/sites'],
    ['get_overview', { site: SITE, ...MARCH }, '/api/v1/sites/shop.test/overview?from=2026-03-01&to=2026-03-31'],
    ['get_overview', { site: SITE }, '/api/v1/sites/shop.test/overview'],
    ['get_overview', { site: 'SHOP.test', range: '7d' }, '/api/v1/sites/SHOP.test/overview?range=7d'],
    ['get_timeseries', { site: SITE, ...MARCH }, '/api/v1/sites/shop.test/timeseries?from=2026-03-01&to=2026-03-31'],
    [
      'get_timeseries',
      { site: SITE, from: '2026-03-20', to: '2026-03-20', interval: 'hour' },
      '/api/v1/sites/shop.test/timeseries?from=2026-03-20&to=2026-03-20&interval=hour',
    ],
    [
      'get_timeseries',
      { site: SITE, range: 'all', interval: 'month' },
      '/api/v1/sites/shop.test/timeseries?range=all&interval=month',
    ],
    [
      'get_breakdown',
      { site: SITE, dimension: 'channel', ...MARCH },
      '/api/v1/sites/shop.test/breakdown/channel?from=2026-03-01&to=2026-03-31',
    ],
    [
      'get_breakdown',
      { site: SITE, dimension: 'page', range: '90d', limit: 2 },
      '/api/v1/sites/shop.test/breakdown/page?range=90d&limit=2',
    ],
    [
      'get_breakdown',
      { site: SITE, dimension: 'country', range: 'all' },
      '/api/v1/sites/shop.test/breakdown/country?range=all',
    ],
    ['get_goals', { site: SITE, ...MARCH }, '/api/v1/sites/shop.test/goals?from=2026-03-01&to=2026-03-31'],
    [
      'get_goals',
      { site: SITE, range: '90d', goal: 'Outbound Link: Click', limit: 5 },
      '/api/v1/sites/shop.test/goals?range=90d&goal=Outbound%20Link%3A%20Click&limit=5',
    ],
    ['get_realtime', { site: SITE, limit: 3 }, '/api/v1/sites/shop.test/realtime?limit=3'],
    ['get_retention', { site: SITE, range: '90d' }, '/api/v1/sites/shop.test/retention?range=90d'],
    [
      'get_retention',
      { site: SITE, range: '90d', filters: '[["is","visit:channel",["Search"]]]' },
      `/api/v1/sites/shop.test/retention?range=90d&filters=${encodeURIComponent('[["is","visit:channel",["Search"]]]')}`,
    ],
    [
      'list_payments',
      { site: SITE, ...MARCH, filters: '[["is","visit:channel",["Search"]]]' },
      `/api/v1/sites/shop.test/payments?from=2026-03-01&to=2026-03-31&filters=${encodeURIComponent('[["is","visit:channel",["Search"]]]')}`,
    ],
    [
      // The same filters given as an array, as a model writes them.
      'list_payments',
      { site: SITE, ...MARCH, filters: [['is', 'visit:channel', ['Search']]] },
      `/api/v1/sites/shop.test/payments?from=2026-03-01&to=2026-03-31&filters=${encodeURIComponent('[["is","visit:channel",["Search"]]]')}`,
    ],
    [
      'list_properties',
      { site: SITE, ...MARCH, limit: 5 },
      '/api/v1/sites/shop.test/properties?from=2026-03-01&to=2026-03-31&limit=5',
    ],
    [
      'get_breakdown',
      { site: SITE, dimension: 'prop:plan', ...MARCH },
      '/api/v1/sites/shop.test/breakdown/prop%3Aplan?from=2026-03-01&to=2026-03-31',
    ],
    ['list_payments', { site: SITE, ...MARCH }, '/api/v1/sites/shop.test/payments?from=2026-03-01&to=2026-03-31'],
    [
      'list_payments',
      { site: SITE, range: '90d', filter: 'attributed', limit: 1, offset: 1 },
      '/api/v1/sites/shop.test/payments?range=90d&filter=attributed&limit=1&offset=1',
    ],
    [
      'list_payments',
      { site: SITE, range: '90d', filter: 'refunded' },
      '/api/v1/sites/shop.test/payments?range=90d&filter=refunded',
    ],
    ['get_visitor_timeline', { site: SITE, visitor_id: 'alice-0001' }, '/api/v1/sites/shop.test/visitors/alice-0001'],
    [
      'get_visitor_timeline',
      { site: SITE, visitor_id: 'bob-00000001' },
      '/api/v1/sites/shop.test/visitors/bob-00000001',
    ],
  ])('%s %j gives exactly the JSON of GET %s, as structured content and as text', async (name, args, path) => {
    const expected = await rest(path);
    const result = await call(await connect(), name, args);
    expect(result.isError ?? false, text(result)).toBe(false);
    expect(result.structuredContent).toEqual(expected);
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(text(result))).toEqual(expected);
  });

  it('answers a tool call posted on its own (no initialize first) with one JSON response', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_sites', arguments: {} } },
      `Bearer ${s.key}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { id: number; result: CallToolResult };
    expect(body.id).toBe(7);
    expect(body.result.structuredContent).toEqual(await rest('/api/v1/sites'));
  });

  it.each([
    ['get_breakdown', { site: SITE, dimension: 'planet' }, /dimension/],
    ['get_breakdown', { site: SITE }, /dimension/],
    ['get_breakdown', { site: SITE, dimension: 'channel', limit: 5000 }, /limit/],
    ['get_overview', { site: SITE, range: 'yesterday' }, /range/],
    ['get_overview', { site: SITE, from: '2026-03-01' }, /^to: is required when from is given$/],
    ['get_overview', { site: SITE, from: '2026-03-31', to: '2026-03-01' }, /^from: must not be after to$/],
    ['get_overview', { site: SITE, from: '2026-02-30', to: '2026-03-01' }, /^from: /],
    ['get_overview', { site: SITE, from: '2000-01-01', to: '2026-03-01' }, /^to: must be at most 10 years after from$/],
    [
      'get_timeseries',
      { site: SITE, range: '30d', interval: 'hour' },
      /^interval: hour takes a range of at most 7 days/,
    ],
    ['get_timeseries', { site: SITE, interval: 'week' }, /interval/],
    ['list_payments', { site: SITE, filter: 'big' }, /filter/],
    ['get_overview', { site: SITE, filters: [['is', 'visit:planet', ['Mars']]] }, /filters\[0\]\[1\]/],
    ['get_overview', { site: SITE, filters: '[["is","visit:planet",["Mars"]]]' }, /filters\[0\]\[1\]/],
    ['get_overview', { site: SITE, filters: { is: 'Search' } }, /filters/],
    ['list_payments', { site: SITE, offset: -1 }, /offset/],
    ['get_visitor_timeline', { site: SITE, visitor_id: 'nobody-123' }, /^no visitor nobody-123$/],
    ['get_visitor_timeline', { site: SITE }, /visitor_id/],
  ])('%s %j is a tool error, not a protocol error', async (name, args, message) => {
    const result = await call(await connect(), name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(text(result)).toMatch(message);
  });

  it("treats another account's site and an unknown site alike, listing the sites the key can read", async () => {
    const client = await connect();
    for (const other of ['rival.test', 'nope.test']) {
      for (const [name, args] of [
        ['get_overview', {}],
        ['get_timeseries', {}],
        ['get_breakdown', { dimension: 'channel' }],
        ['get_retention', {}],
        ['list_payments', {}],
        ['get_visitor_timeline', { visitor_id: 'alice-0001' }],
      ] as const) {
        const result = await call(client, name, { site: other, ...args });
        expect(result.isError, `${name} ${other}`).toBe(true);
        expect(text(result)).toBe(`no site ${other}. Sites this API key can read: empty.test, shop.test.`);
      }
    }
  });

  it('takes the only site of a one-site account when site is left out', async () => {
    const client = await connect(soloKey);
    expect((await call(client, 'list_sites')).structuredContent).toEqual({
      sites: [{ domain: 'solo.test', timezone: 'America/New_York' }],
    });
    for (const [name, args, path] of [
      ['get_overview', { range: '7d' }, '/api/v1/sites/solo.test/overview?range=7d'],
      ['get_timeseries', { range: 'today' }, '/api/v1/sites/solo.test/timeseries?range=today'],
      ['get_breakdown', { dimension: 'device' }, '/api/v1/sites/solo.test/breakdown/device'],
      ['get_retention', {}, '/api/v1/sites/solo.test/retention'],
      ['list_payments', { filter: 'unattributed' }, '/api/v1/sites/solo.test/payments?filter=unattributed'],
    ] as const) {
      const result = await call(client, name, args);
      expect(result.isError ?? false, text(result)).toBe(false);
      expect(result.structuredContent).toEqual(await rest(path, soloKey));
    }
    const timeline = await call(client, 'get_visitor_timeline', { visitor_id: 'alice-0001' });
    expect(text(timeline)).toBe('no visitor alice-0001');
  });

  it('asks for site, listing the choices, when an account with several sites leaves it out', async () => {
    const client = await connect();
    for (const [name, args] of [
      ['get_overview', {}],
      ['get_breakdown', { dimension: 'channel' }],
      ['get_retention', {}],
      ['list_payments', {}],
      ['get_visitor_timeline', { visitor_id: 'alice-0001' }],
    ] as const) {
      const result = await call(client, name, args);
      expect(result.isError, name).toBe(true);
      expect(text(result)).toBe(
        'site: is required: this account has 2 sites: empty.test, shop.test. Pass one of them as site.',
      );
    }
  });

  it('answers 401 JSON before any MCP processing without a valid key, and the client cannot connect', async () => {
    const unknown = newApiKey();
    for (const authorization of [
      undefined,
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      s.key,
      'Bearer ff_nope',
      `Bearer ${unknown}`,
      `Bearer ${revokedKey}`,
    ]) {
      const res = await post(INIT, authorization);
      expect(res.status, String(authorization)).toBe(401);
      // RFC 6750 §3: the challenge on every 401, so MCP clients report the key instead of starting OAuth
      const sentBearer = authorization?.startsWith('Bearer ') ?? false;
      expect(res.headers.get('www-authenticate'), String(authorization)).toMatch(
        sentBearer
          ? /^Bearer realm="footfall", error="invalid_token", error_description="the API key is not valid[^"]*"$/
          : /^Bearer realm="footfall"$/,
      );
      expect(await res.json()).toEqual({
        error: sentBearer ? expect.stringMatching(/^the API key is not valid/) : expect.any(String),
      });
      // not even a malformed body gets as far as the transport
      const junk = await fetch(`${s.svc.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) },
        body: '{not json',
      });
      expect(junk.status).toBe(401);
      expect(junk.headers.get('www-authenticate')).toMatch(/^Bearer realm="footfall"/);
    }
    for (const key of [unknown, revokedKey]) {
      const client = new Client({ name: 'footfall-test', version: '1.0.0' });
      await expect(client.connect(transport(key))).rejects.toMatchObject({ code: 401 });
    }
  });

  it('stops a key on its very next request after revocation', async () => {
    const fresh = await s.keys.create('solo', 'short-lived', new Date());
    const client = await connect(fresh.key);
    expect((await call(client, 'list_sites')).isError ?? false).toBe(false);
    await s.keys.revoke(fresh.id, new Date());
    await expect(call(client, 'list_sites')).rejects.toMatchObject({ code: 401 });
  });

  it('answers GET and DELETE /mcp with 405 and Allow: POST, with or without a key', async () => {
    for (const method of ['GET', 'DELETE']) {
      for (const headers of [{ authorization: `Bearer ${s.key}`, accept: 'text/event-stream' }, {}] as Array<
        Record<string, string>
      >) {
        const res = await fetch(`${s.svc.url}/mcp`, { method, headers });
        expect(res.status, method).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        expect(await res.json()).toEqual({ error: expect.stringMatching(/method not allowed/) });
      }
    }
  });

  it('leaves protocol errors to the transport once the key is valid', async () => {
    const junk = await fetch(`${s.svc.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${s.key}` },
      body: '{not json',
    });
    expect(junk.status).toBe(400);
    expect(await junk.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const noAccept = await fetch(`${s.svc.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` },
      body: JSON.stringify(INIT),
    });
    expect(noAccept.status).toBe(406);
  });
});

describe('MCP endpoint without app mode', () => {
  it('is 404 like every app route', async () => {
    const svc = await startTestService([{}], { app: false });
    try {
      for (const method of ['POST', 'GET']) {
        const res = await fetch(`${svc.url}/mcp`, {
          method,
          headers: MCP_HEADERS,
          ...(method === 'POST' ? { body: JSON.stringify(INIT) } : {}),
        });
        expect(res.status, method).toBe(404);
      }
    } finally {
      await svc.cleanup();
    }
  });
});

describe('MCP handler on a Lambda function URL event', () => {
  const event = (body: unknown, o: { base64?: boolean; method?: string; path?: string } = {}): HttpEvent => {
    const raw = JSON.stringify(body);
    return {
      version: '2.0',
      routeKey: '$default',
      rawPath: o.path ?? '/mcp',
      rawQueryString: '',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${newApiKey()}`, host: 'abc.lambda-url.eu-west-1.on.aws' },
      isBase64Encoded: o.base64 ?? false,
      body: o.base64 ? Buffer.from(raw).toString('base64') : raw,
      requestContext: {
        accountId: 'anonymous',
        apiId: 'abc',
        domainName: 'abc.lambda-url.eu-west-1.on.aws',
        domainPrefix: 'abc',
        requestId: 'r',
        routeKey: '$default',
        stage: '$default',
        time: '',
        timeEpoch: 0,
        http: {
          method: o.method ?? 'POST',
          path: o.path ?? '/mcp',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.1',
          userAgent: 'test',
        },
      },
    };
  };
  // A report store whose every read fails, as DynamoDB does when throttled or unreachable.
  const failingStore = () =>
    new Proxy(
      {},
      { get: () => () => Promise.reject(new Error('ProvisionedThroughputExceededException: secret table detail')) },
    );
  const deps = (over: Partial<McpHandlerDeps> = {}): McpHandlerDeps => ({
    allowedOrigins: () => [],
    // Silent: these tests make the handler log the failures they inject.
    logger: new Logger({ serviceName: 'mcp-test', logLevel: 'SILENT' }),
    metrics: createTelemetry('mcp-test').metrics,
    keys: { authenticate: async () => 'acme' },
    sites: {
      listSites: async () => [site({ domain: 'one.test' })],
      getSite: async (domain) => (domain === 'one.test' ? site({ domain: 'one.test' }) : null),
    },
    store: failingStore as unknown as ReportHandlerDeps['store'],
    rates: async () => () => 1,
    clock: () => Date.UTC(2026, 2, 31),
    ...over,
  });
  const ctx: Context = localContext('mcp');
  const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const resultOf = (res: { body?: string }) => (JSON.parse(res.body ?? '{}') as { result: CallToolResult }).result;

  it('decodes a base64 body and answers list_sites from the same deps', async () => {
    const res = await createMcpHandler(deps())(event(toolCall('list_sites'), { base64: true }), ctx);
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['content-type']).toMatch(/^application\/json/);
    expect(resultOf(res).structuredContent).toEqual({ sites: [{ domain: 'one.test', timezone: 'Europe/Berlin' }] });
  });

  it('turns a storage failure into a tool error asking to retry, without the internal message', async () => {
    const res = await createMcpHandler(deps())(event(toolCall('get_overview')), ctx);
    expect(res.statusCode).toBe(200);
    const result = resultOf(res);
    expect(result).toEqual({ content: [{ type: 'text', text: RETRY_MESSAGE }], isError: true });
    expect(res.body).not.toContain('secret table detail');
  });

  it('turns a failing site directory into a tool error too', async () => {
    const broken = deps({
      sites: { listSites: () => Promise.reject(new Error('down')), getSite: () => Promise.reject(new Error('down')) },
    });
    const result = resultOf(await createMcpHandler(broken)(event(toolCall('get_overview', { site: 'one.test' })), ctx));
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: RETRY_MESSAGE }]);
  });

  it('answers 503 JSON when the key cannot be checked, 404 off /mcp, 405 for GET', async () => {
    const keyDown = deps({ keys: { authenticate: () => Promise.reject(new Error('timeout')) } });
    const down = await createMcpHandler(keyDown)(event(toolCall('list_sites')), ctx);
    expect([down.statusCode, JSON.parse(down.body ?? '{}')]).toEqual([
      503,
      { error: 'data could not be read or written, retry later' },
    ]);
    expect((await createMcpHandler(deps())(event(toolCall('list_sites'), { path: '/other' }), ctx)).statusCode).toBe(
      404,
    );
    expect((await createMcpHandler(deps())(event(undefined, { method: 'GET' }), ctx)).statusCode).toBe(405);
  });
});
