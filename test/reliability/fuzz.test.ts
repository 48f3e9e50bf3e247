import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { signWebhook } from '../support/webhook-signature.js';
import { DIMENSIONS } from '../../lambdas/domain/rollup.js';
import { RANGE_NAMES } from '../../lambdas/domain/range.js';
import { SITE, scenarioService } from '../reports/scenario.js';
import { readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { localPaths } from '../../local/service.js';
import { waitForCatchUp } from '../../bench/load.js';
import { startTestService } from '../support/local.js';
import { CHROME_UA, holdsAnEvent } from '../support/events.js';
import { fixture } from '../payments/fixture.js';
import { LONG, report } from './support.js';
import { MAX_BODY_BYTES } from '../../lambdas/domain/inbound.js';

/**
 * Hostile input (`docs/reliability.md` "The checks", `docs/security.md` "Hostile input"): every public HTTP surface of a running app-mode
 * local service, fuzzed over loopback with fast-check-generated requests:
 * `POST /api/event`, `POST /api/webhooks/{provider}/{domain}` (random junk, and
 * validly signed mutations of real provider payloads), every `/api/v1` route
 * and parameter, and `/mcp` JSON-RPC; plus oversize bodies, deep nesting,
 * invalid UTF-8 and huge arrays. The server must never fail (health stays 200),
 * never answer 5xx, and every error must have the documented shape (`docs/api.md` "Errors").
 *
 * Short form: a few thousand requests; long form: over 100,000.
 */
const SCALE = LONG ? 36 : 1;
const RUNS = { event: 900 * SCALE, webhook: 700 * SCALE, report: 900 * SCALE, mcp: 700 * SCALE };

const SECRETS = {
  stripe: 'whsec_fuzz_stripe',
  lemonsqueezy: 'fuzz-lemon-secret',
  paddle: 'pdl_ntfset_fuzz',
  polar: 'polar_whs_fuzz',
} as const;
type Provider = keyof typeof SECRETS;
const PROVIDERS = Object.keys(SECRETS) as Provider[];
const HOOK_SITE = 'hooks.test';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One raw HTTP/1.1 request: the path is sent as given (no URL normalisation), the body as bytes with its length. */
function send(
  base: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<Reply> {
  const url = new URL(base);
  const headers = {
    ...options.headers,
    ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method, path: options.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const stats = {
  requests: 0,
  byStatus: {} as Record<string, number>,
  bySurface: {} as Record<string, Record<string, number>>,
};
function count(surface: string, reply: Reply): void {
  stats.requests++;
  stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
  const statuses = (stats.bySurface[surface] ??= {});
  statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
}

const jsonOf = (reply: Reply): unknown => {
  try {
    return JSON.parse(reply.body.toString('utf8'));
  } catch {
    return undefined;
  }
};

/** The report API / webhook / MCP 401-405 error shape (`docs/api.md` "Errors"): JSON `{error: string}` and nothing else. */
function expectJsonError(reply: Reply, context: string): void {
  expect(String(reply.headers['content-type']), context).toMatch(/^application\/json/);
  const body = jsonOf(reply) as Record<string, unknown> | undefined;
  expect(body, context).toBeTypeOf('object');
  expect(Object.keys(body ?? {}), context).toEqual(['error']);
  expect(body?.error, context).toBeTypeOf('string');
}

const describeRequest = (
  r: { method: string; path: string; headers?: Record<string, string>; body?: Buffer | string },
  reply: Reply,
) =>
  `${r.method} ${r.path.slice(0, 300)} headers=${JSON.stringify(r.headers ?? {}).slice(0, 300)} body=${String(r.body ?? '').slice(0, 300)} → ${reply.status} ${reply.body.toString('utf8').slice(0, 300)}`;

// Generators ---------------------------------------------------------------

/** Header values Node's client can send: printable ASCII and Latin-1, no control characters. */
const headerValue = fc.oneof(
  fc.stringMatching(/^[\x20-\x7e]{0,120}$/),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  // Long, but a few of them stay under Node's 16 KiB limit on the request head (beyond it Node itself answers 431).
  fc.constantFrom('', CHROME_UA, 'curl/8.5.0', 'Googlebot/2.1 (+http://www.google.com/bot.html)', 'x'.repeat(2_500)),
);

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/json',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      'image/png',
      'application/json; charset=latin1',
    ),
    fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
  ),
  { nil: undefined },
);

/** Bytes that are not valid UTF-8. */
const invalidUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 300 })
  .map((b) =>
    Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from(b), Buffer.from([0xf0, 0x90, 0x80])]),
  );

/** JSON nested `depth` levels deep. */
const deep = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;

const eventLike = fc.record(
  {
    n: fc.oneof(fc.constantFrom('pageview', 'goal'), fc.string(), fc.integer(), fc.constant(null)),
    u: fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.string().map((p) => `https://${SITE}/${encodeURI(p)}`),
      fc.constantFrom(
        `https://${SITE}/`,
        `https://www.${SITE}/pricing?utm_source=x&gclid=1`,
        'javascript:alert(1)',
        'file:///etc/passwd',
        `https://${SITE}/${'a'.repeat(2100)}`,
      ),
      fc.string(),
    ),
    s: fc.oneof(
      fc.constantFrom(SITE, SITE.toUpperCase(), ` ${SITE} `, 'rival.test', 'empty.test'),
      fc.domain(),
      fc.string(),
      fc.constant(null),
    ),
    r: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null), fc.integer()),
    v: fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9-]{8,64}$/), fc.constant(null)),
    w: fc.oneof(fc.integer(), fc.double(), fc.constant(-1), fc.constant(1e308), fc.string(), fc.constant(null)),
    g: fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.string({ unit: 'binary' }),
      fc.constant(null),
      fc.integer(),
    ),
    l: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null)),
  },
  { requiredKeys: [] },
);

/** Events that pass validation, with hostile values wherever the schema lets them through. */
const validEvent = fc.record(
  {
    n: fc.constantFrom('pageview', 'pageview', 'goal', 'Pageview', 'custom'),
    u: fc
      .tuple(
        fc.constantFrom(SITE, `www.${SITE}`, `a.b.${SITE}`, `${SITE}:8443`, 'rival.test', 'evil.example'),
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        fc.dictionary(
          fc.constantFrom(
            'utm_source',
            'utm_medium',
            'utm_campaign',
            'utm_term',
            'utm_content',
            'gclid',
            'fbclid',
            'ref',
            'x',
          ),
          fc.string({ unit: 'grapheme', maxLength: 80 }),
          { maxKeys: 4 },
        ),
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      )
      .map(([host, path, query, hash]) =>
        `https://${host}/${encodeURI(path)}?${new URLSearchParams(query).toString()}${hash === undefined ? '' : `#/${encodeURIComponent(hash)}`}`.slice(
          0,
          2048,
        ),
      ),
    s: fc.constantFrom(SITE, SITE, SITE.toUpperCase(), ` ${SITE}`, 'rival.test', 'nope.test'),
    r: fc.oneof(
      fc.webUrl({ withQueryParameters: true }),
      fc.string({ maxLength: 200 }),
      fc.constantFrom('https://chatgpt.com/', 'https://news.ycombinator.com/', `https://${SITE}/self`),
      fc.constant(null),
    ),
    v: fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9-]{8,64}$/),
      fc.string({ maxLength: 256 }),
      fc.constant('h-00000000000000000000000000000000'),
      fc.constant(null),
    ),
    w: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.constant(null)),
    g: fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 1024 }),
      fc.constantFrom('Signup', '  Signup  ', 'Outbound Link: Click', '', '𝒢'.repeat(200)),
      fc.constant(null),
    ),
    l: fc.oneof(fc.webUrl(), fc.string({ maxLength: 2048 }), fc.constant(null)),
  },
  { requiredKeys: ['n', 'u', 's'] },
);

const eventBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.oneof(
      validEvent.map((e) => JSON.stringify(e)),
      fc.array(validEvent, { minLength: 1, maxLength: 55 }).map((a) => JSON.stringify(a)),
    ),
  },
  eventLike.map((e) => JSON.stringify(e)),
  fc.array(eventLike, { maxLength: 70 }).map((a) => JSON.stringify(a)),
  fc.json(),
  fc.string(),
  fc.string({ unit: 'binary' }),
  invalidUtf8,
  fc.integer({ min: 1, max: 5_000 }).map((d) => deep(d)),
  fc.integer({ min: 1, max: 3_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => JSON.stringify(Array.from({ length: n }, () => 0))),
  fc.constant(''),
);

// Fixtures of every provider, as the bodies signed mutations start from.
const FIXTURES: Record<Provider, string[]> = Object.fromEntries(
  PROVIDERS.map((p) => [
    p,
    readdirSync(new URL(`../fixtures/payments/${p}/`, import.meta.url))
      .filter((f) => f.endsWith('.json'))
      .map((f) => fixture(p, f)),
  ]),
) as Record<Provider, string[]>;

/** A JSON value with some of its members deleted or replaced by arbitrary JSON. */
function mutate(json: unknown, edits: Array<{ at: number; remove: boolean; value: unknown }>): unknown {
  const copy = structuredClone(json);
  for (const edit of edits) {
    const slots: Array<[Record<string, unknown> | unknown[], string | number]> = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      for (const [k, child] of Object.entries(node)) {
        slots.push([node as Record<string, unknown>, Array.isArray(node) ? Number(k) : k]);
        walk(child);
      }
    };
    walk(copy);
    const slot = slots[edit.at % Math.max(1, slots.length)];
    if (!slot) continue;
    const [parent, key] = slot;
    if (edit.remove && !Array.isArray(parent)) delete parent[key as string];
    else (parent as Record<string | number, unknown>)[key] = edit.value;
  }
  return copy;
}

/** Signature headers of `provider` for `body`, valid for the webhook service's secret and clock. */
const sign = (provider: Provider, body: string, secret: string = SECRETS[provider]) =>
  signWebhook(provider, body, secret);

/** Path segments from the plausible to the hostile. */
const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constant(SITE) },
  { weight: 2, arbitrary: fc.constantFrom('empty.test', 'rival.test', 'SHOP.TEST', 'nope.example') },
  fc.constantFrom(
    '..',
    '.',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '..%5c..%5cwindows',
    '%00',
    'shop.test%00.evil',
    '%',
    '%ZZ',
    '%E0%A4%A',
    '%C0%AE%C0%AE',
    '%FF%FE',
    '%F0%9F%92%A9',
    encodeURIComponent('<script>alert(1)</script>'),
    encodeURIComponent("' OR 1=1 --"),
    'a'.repeat(5_000),
    '%25',
    '~',
    '',
  ),
  fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{0,40}$/),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);

const validDay = fc
  .date({ min: new Date('2014-01-01'), max: new Date('2038-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const queryValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RANGE_NAMES) },
  { weight: 3, arbitrary: validDay },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 1_001 }).map(String) },
  fc.constantFrom('1y', '', ' 7d', 'TODAY'),
  fc.constantFrom(
    '2026-03-01',
    '2026-02-30',
    '2026-13-01',
    '0000-00-00',
    '9999-12-31',
    '1970-01-01',
    '2016-03-01',
    '2036-03-31',
    '2026-3-1',
    '+02026-03-01',
  ),
  fc.constantFrom(
    '0',
    '-1',
    '1',
    '20',
    '200',
    '201',
    '1000',
    '1001',
    '1e3',
    '0x10',
    '1.5',
    'NaN',
    'Infinity',
    '1e309',
    '9007199254740993',
    ' 5',
    '5 ',
    '١٢',
  ),
  fc.constantFrom('all', 'attributed', 'unattributed', 'refunded', 'ALL'),
  fc.string({ maxLength: 30 }),
  fc.constant('x'.repeat(3000)),
);
const queryString = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'range',
        'from',
        'to',
        'limit',
        'offset',
        'filter',
        'dimension',
        'site',
        'x',
        '__proto__',
        'constructor',
      ),
      queryValue,
    ),
    { maxLength: 6 },
  )
  .chain((pairs) =>
    fc.oneof(
      fc.constant(pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')),
      // Raw, possibly invalid percent-encoding in the query too.
      fc.constant(pairs.map(([k, v]) => `${k}=${v.replace(/[^\x21-\x7e]/g, '').replace(/[#]/g, '')}`).join('&')),
      fc.constantFrom(
        '%',
        'range=%ZZ',
        'a=%E0%A4%A',
        '&&&',
        '=7d',
        'range',
        'range=7d&range=30d',
        'from=2026-03-01&to=2026-02-01',
        'from=2016-03-31&to=2026-03-31',
      ),
    ),
  );

const reportPath = fc
  .tuple(
    fc.constantFrom(
      'sites',
      'overview',
      'breakdown',
      'breakdown',
      'payments',
      'payments',
      'retention',
      'visitors',
      'openapi',
      'other',
    ),
    segment,
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...DIMENSIONS) },
      fc.constantFrom('goal', 'CHANNEL', 'hostname'),
      segment,
    ),
    fc.oneof(fc.constantFrom('alice-0001', 'bob-00000001', 'dave-0000001'), segment),
    fc.boolean(),
    queryString,
  )
  .map(([route, domain, dimension, visitor, slash, query]) => {
    const base = {
      sites: '/api/v1/sites',
      overview: `/api/v1/sites/${domain}/overview`,
      breakdown: `/api/v1/sites/${domain}/breakdown/${dimension}`,
      payments: `/api/v1/sites/${domain}/payments`,
      retention: `/api/v1/sites/${domain}/retention`,
      visitors: `/api/v1/sites/${domain}/visitors/${visitor}`,
      openapi: '/api/v1/openapi.json',
      other: `/api/v1/${domain}/${dimension}`,
    }[route];
    return `${base}${slash ? '/' : ''}${query ? `?${query}` : ''}`;
  });

const TOOLS = ['list_sites', 'get_overview', 'get_breakdown', 'get_retention', 'list_payments', 'get_visitor_timeline'];
const toolArguments = fc.dictionary(
  fc.constantFrom('site', 'range', 'from', 'to', 'dimension', 'limit', 'offset', 'filter', 'visitor_id', 'extra'),
  fc.oneof(
    { weight: 3, arbitrary: queryValue },
    {
      weight: 3,
      arbitrary: fc.constantFrom(SITE, 'rival.test', 'empty.test', ...DIMENSIONS, 'alice-0001', 'bob-00000001'),
    },
    fc.integer(),
    fc.double(),
    fc.jsonValue({ maxDepth: 2 }),
  ),
  { maxKeys: 6 },
);
const rpcId = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.constantFrom(1e308, -0, 2 ** 53 + 1, 'x'.repeat(100_000)),
  fc.jsonValue({ maxDepth: 1 }),
);
const rpcMessage = fc.oneof(
  fc.record({
    jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, fc.constantFrom('1.0', 2, null)),
    id: rpcId,
    method: fc.constantFrom('tools/call', 'tools/call', 'tools/call', 'tools/list', 'initialize', 'ping'),
    params: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record(
          {
            name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...TOOLS) }, fc.string()),
            arguments: fc.oneof({ weight: 4, arbitrary: toolArguments }, fc.jsonValue({ maxDepth: 2 })),
          },
          { requiredKeys: ['name'] },
        ),
      },
      fc.record({
        protocolVersion: fc.constantFrom('2025-06-18', '2024-11-05', 'x'),
        capabilities: fc.jsonValue({ maxDepth: 1 }),
        clientInfo: fc.jsonValue({ maxDepth: 1 }),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    ),
  }),
  fc.record(
    {
      jsonrpc: fc.constant('2.0'),
      id: rpcId,
      method: fc.oneof(
        fc.constantFrom(
          'notifications/initialized',
          'resources/list',
          'prompts/list',
          'completion/complete',
          'logging/setLevel',
          'tools/call/../list',
          'rpc.discover',
        ),
        fc.string(),
      ),
      params: fc.jsonValue({ maxDepth: 3 }),
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  ),
  fc.record({ jsonrpc: fc.constant('2.0'), id: rpcId, result: fc.jsonValue({ maxDepth: 2 }) }),
  fc.jsonValue({ maxDepth: 3 }),
);
const mcpBody = fc.oneof(
  { weight: 5, arbitrary: rpcMessage.map((m) => JSON.stringify(m)) },
  fc.array(rpcMessage, { maxLength: 6 }).map((a) => JSON.stringify(a)),
  fc.string(),
  invalidUtf8,
  fc
    .integer({ min: 1, max: 20_000 })
    .map(
      (d) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_overview","arguments":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}}`,
    ),
  fc.constant(''),
);

// The services --------------------------------------------------------------

type Scenario = Awaited<ReturnType<typeof scenarioService>>;
type Hooks = Awaited<ReturnType<typeof startTestService>>;

describe('hostile input on every public surface of the local service (app mode)', () => {
  let s: Scenario;
  let hooks: Hooks;
  let base = '';
  let hooksBase = '';

  beforeAll(async () => {
    s = await scenarioService();
    base = s.svc.url;
    // Hostile events that pass validation go all the way to the stream, the sessionizer and the archive.
    await new DynamoConfigStore(s.svc.dynamo).updateSite(SITE, { rate_limit: 1_000_000 });
    // Webhooks need a clock near the real one: the Standard Webhooks library checks timestamps against it.
    hooks = await startTestService([
      { domain: HOOK_SITE, timezone: 'UTC' },
      { domain: 'unconnected.test', timezone: 'UTC' },
    ]);
    hooksBase = hooks.url;
    const config = new DynamoConfigStore(hooks.dynamo, hooks.secrets);
    for (const p of PROVIDERS) await config.connectProvider(HOOK_SITE, p, SECRETS[p], new Date());
  }, 120_000);
  afterAll(async () => {
    agent.destroy();
    await s?.svc.cleanup();
    await hooks?.cleanup();
  });

  let sinceHealth = 0;
  const healthy = async () => {
    for (const b of [base, hooksBase]) {
      const reply = await send(b, { method: 'GET', path: '/health' });
      expect(reply.status).toBe(200);
      expect(reply.body.toString()).toBe('ok');
    }
  };
  /** Sends, counts, checks "never 5xx" and the server's health every 200 requests. */
  const fire = async (
    surface: string,
    b: string,
    r: { method: string; path: string; headers?: Record<string, string>; body?: Buffer | string },
  ) => {
    const reply = await send(b, r);
    count(surface, reply);
    expect(reply.status, describeRequest(r, reply)).toBeLessThan(500);
    if (++sinceHealth >= 200) {
      sinceHealth = 0;
      await healthy();
    }
    return reply;
  };

  it('POST /api/event: 202 with an empty body, or 400 "invalid event" (any body, header, content type)', async () => {
    await fc.assert(
      fc.asyncProperty(
        eventBody,
        fc.dictionary(
          fc.constantFrom(
            'user-agent',
            'accept-language',
            'cf-ipcountry',
            'cloudfront-viewer-country',
            'x-country-code',
            'origin',
            'referer',
            'x-forwarded-for',
          ),
          headerValue,
          { maxKeys: 5 },
        ),
        contentType,
        fc.constantFrom(
          'POST',
          'POST',
          'POST',
          'POST',
          'POST',
          'POST',
          'POST',
          'POST',
          'OPTIONS',
          'GET',
          'PUT',
          'DELETE',
        ),
        async (body, headers, type, method) => {
          const r = {
            method,
            path: '/api/event',
            headers: { 'user-agent': CHROME_UA, ...headers, ...(type ? { 'content-type': type } : {}) },
            body,
          };
          const reply = await fire('event', base, r);
          const context = describeRequest(r, reply);
          expect(reply.headers['access-control-allow-origin'], context).toBe('*');
          if (method === 'POST') {
            // Meaning, not only status : 202 exactly when the body holds an event, 413 only past the ceiling.
            const text = Buffer.isBuffer(body) ? body.toString('utf8') : body;
            const expected = Buffer.byteLength(text) > MAX_BODY_BYTES ? 413 : holdsAnEvent(text) ? 202 : 400;
            expect(reply.status, context).toBe(expected);
            expect(reply.body.toString(), context).toBe(
              { 202: '', 400: 'invalid event', 413: 'request too large' }[expected],
            );
          } else if (method === 'OPTIONS') {
            expect(reply.status, context).toBe(204);
          } else {
            expect(reply.status, context).toBe(405);
            expect(reply.headers.allow, context).toBe('POST, OPTIONS');
          }
        },
      ),
      { numRuns: RUNS.event },
    );
  });

  it('POST /api/webhooks/{provider}/{domain}: 200 {received}, or a JSON {error} (junk, bad signatures, signed mutations of real payloads)', async () => {
    const provider = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...PROVIDERS) }, segment);
    const domain = fc.oneof({ weight: 6, arbitrary: fc.constant(HOOK_SITE) }, fc.constant('unconnected.test'), segment);
    const signedMutation = fc
      .tuple(
        fc.constantFrom(...PROVIDERS),
        fc.nat(),
        fc.array(fc.record({ at: fc.nat(), remove: fc.boolean(), value: fc.jsonValue({ maxDepth: 2 }) }), {
          maxLength: 4,
        }),
      )
      .map(([p, i, edits]) => {
        const list = FIXTURES[p];
        const body = JSON.stringify(mutate(JSON.parse(list[i % list.length] ?? '{}'), edits));
        return { provider: p, body: body as string | Buffer, headers: sign(p, body) };
      });
    const junk = fc
      .tuple(
        fc.constantFrom(...PROVIDERS),
        fc.oneof(
          fc.string(),
          fc.json(),
          invalidUtf8,
          fc
            .integer({ min: 1, max: 20_000 })
            .map(
              (d) => `{"type":"charge.succeeded","data":${deep(d, '{"a":', '}').replace(/}+$/, '')}1${'}'.repeat(d)}}`,
            ),
        ),
        fc.boolean(),
        fc.dictionary(
          fc.constantFrom(
            'stripe-signature',
            'x-signature',
            'paddle-signature',
            'webhook-id',
            'webhook-timestamp',
            'webhook-signature',
          ),
          headerValue,
          { maxKeys: 4 },
        ),
      )
      .map(([p, body, signed, headers]) => ({
        provider: p,
        body,
        headers: signed && typeof body === 'string' ? { ...headers, ...sign(p, body) } : headers,
      }));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(signedMutation, junk),
        provider,
        domain,
        fc.boolean(),
        contentType,
        async (delivery, otherProvider, d, keepProvider, type) => {
          const path = `/api/webhooks/${keepProvider ? delivery.provider : otherProvider}/${d}`;
          const r = {
            method: 'POST',
            path,
            headers: { ...delivery.headers, ...(type ? { 'content-type': type } : {}) },
            body: delivery.body,
          };
          const reply = await fire('webhook', hooksBase, r);
          const context = describeRequest(r, reply);
          expect([200, 400, 404], context).toContain(reply.status);
          if (reply.status === 200) expect(jsonOf(reply), context).toMatchObject({ received: true });
          else expectJsonError(reply, context);
        },
      ),
      { numRuns: RUNS.webhook },
    );
  });

  it('GET /api/v1/*: 200 JSON, or a JSON {error} (every route and parameter, hostile path segments and queries, any key)', async () => {
    const authorization = fc.oneof(
      { weight: 8, arbitrary: fc.constant('key') },
      fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        'Basic dXNlcjpwYXNz',
        'bearer key',
        'Bearer ff_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        'rival',
      ),
      headerValue,
    );
    await fc.assert(
      fc.asyncProperty(
        reportPath,
        authorization,
        fc.constantFrom('GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'POST', 'DELETE'),
        async (path, auth, method) => {
          const value =
            auth === 'key'
              ? `Bearer ${s.key}`
              : auth === 'rival'
                ? `Bearer ${s.rivalKey}`
                : auth.replace('bearer key', `bearer ${s.key}`);
          const r = { method, path, headers: (value ? { authorization: value } : {}) as Record<string, string> };
          const reply = await fire('report', base, r);
          const context = describeRequest(r, reply);
          expect([200, 400, 401, 404, 405], context).toContain(reply.status);
          if (reply.status === 200) expect(jsonOf(reply), context).toBeTypeOf('object');
          else expectJsonError(reply, context);
        },
      ),
      { numRuns: RUNS.report },
    );
  });

  it('/mcp JSON-RPC: JSON-RPC answers (tool errors as results), or a JSON {error} for 401/404/405 — random methods, params, ids, batches', async () => {
    const accept = fc.oneof(
      { weight: 12, arbitrary: fc.constant('application/json, text/event-stream') },
      fc.constantFrom('application/json', 'text/event-stream', '*/*', ''),
      headerValue,
    );
    const mcpType = fc.oneof({ weight: 12, arbitrary: fc.constant('application/json') }, contentType);
    const auth = fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, fc.constant(false));
    const host = fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      fc.constantFrom('a b', 'evil.example:99999', '[::1', 'x/y', '%00', ''),
      headerValue,
    );
    await fc.assert(
      fc.asyncProperty(
        mcpBody,
        accept,
        mcpType,
        auth,
        host,
        fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'),
        fc.constantFrom('/mcp', '/mcp', '/mcp', '/mcp', '/mcp/', '/mcp/x', '/mcp?x=%ZZ'),
        async (body, acc, type, withKey, h, method, path) => {
          const headers: Record<string, string> = { accept: acc, 'content-type': type ?? 'application/json' };
          if (withKey) headers.authorization = `Bearer ${s.key}`;
          if (h !== undefined) headers.host = h;
          const r = { method, path, headers, body: method === 'GET' ? undefined : body };
          const reply = await fire('mcp', base, r);
          const context = describeRequest(r, reply);
          if ([401, 404, 405, 413].includes(reply.status)) {
            expectJsonError(reply, context);
            return;
          }
          if (reply.status === 202) {
            expect(reply.body.length, context).toBe(0);
            return;
          }
          const json = jsonOf(reply);
          expect(json, context).toBeTypeOf('object');
          const messages = (Array.isArray(json) ? json : [json]) as Array<Record<string, unknown>>;
          for (const m of messages) {
            expect(m.jsonrpc, context).toBe('2.0');
            if (reply.status === 200 && 'result' in m) {
              const result = m.result as Record<string, unknown>;
              if ('isError' in result) expect(result.isError, context).toBeTypeOf('boolean');
            } else {
              const error = m.error as Record<string, unknown>;
              expect(error?.code, context).toBeTypeOf('number');
              expect(error?.message, context).toBeTypeOf('string');
            }
          }
        },
      ),
      { numRuns: RUNS.mcp },
    );
  });

  it('oversize, deeply nested, invalid UTF-8 and huge inputs on every surface: 413 past 1 MiB, 413 past the event ceiling, never 5xx', async () => {
    const bearer = { authorization: `Bearer ${s.key}` };
    const mcpHeaders = { ...bearer, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const oneEvent = JSON.stringify({ n: 'pageview', u: `https://${SITE}/x`, s: SITE });
    const mib = 1024 * 1024;
    const cases: Array<{
      name: string;
      base: string;
      r: { method: string; path: string; headers?: Record<string, string>; body?: Buffer | string };
      expect: (reply: Reply) => void;
    }> = [
      {
        name: 'event: 1 MiB + 1 byte → 413',
        base,
        r: { method: 'POST', path: '/api/event', body: Buffer.alloc(mib + 1, 0x20) },
        expect: (reply) => (expect(reply.status).toBe(413), expectJsonError(reply, 'event 413')),
      },
      {
        name: 'event: 8 MiB → 413 (the rest of the body is discarded)',
        base,
        r: { method: 'POST', path: '/api/event', body: Buffer.alloc(8 * mib, 0x61) },
        expect: (reply) => expect(reply.status).toBe(413),
      },
      {
        name: 'event: 10,000 valid events (over 64 KiB, under the ceiling) → 202, the first 50 read',
        base,
        r: {
          method: 'POST',
          path: '/api/event',
          headers: { 'user-agent': CHROME_UA },
          body: `[${Array.from({ length: 10_000 }, () => oneEvent).join(',')}]`,
        },
        expect: (reply) => (
          expect(reply.status).toBe(202),
          expect(reply.headers['access-control-allow-origin']).toBe('*')
        ),
      },
      {
        name: 'event: over the ceiling of 50 maximal events → 413 request too large, with CORS',
        base,
        r: { method: 'POST', path: '/api/event', body: `[${oneEvent}]`.padEnd(MAX_BODY_BYTES + 1, ' ') },
        expect: (reply) => (
          expect(reply.status).toBe(413),
          expect(reply.body.toString()).toBe('request too large'),
          expect(reply.headers['access-control-allow-origin']).toBe('*')
        ),
      },
      {
        name: 'event: 51 events of which the 51st is garbage → 202 (items past the 50th are ignored)',
        base,
        r: {
          method: 'POST',
          path: '/api/event',
          headers: { 'user-agent': CHROME_UA },
          body: `[${Array.from({ length: 50 }, () => oneEvent).join(',')},{"garbage":[[[[]]]]}]`,
        },
        expect: (reply) => expect(reply.status).toBe(202),
      },
      {
        name: 'event: nesting 30,000 deep (no event) → 400',
        base,
        r: { method: 'POST', path: '/api/event', body: deep(30_000) },
        expect: (reply) => (expect(reply.status).toBe(400), expect(reply.body.toString()).toBe('invalid event')),
      },
      {
        name: 'event: nesting 400,000 deep (over the ceiling) → 413',
        base,
        r: { method: 'POST', path: '/api/event', body: deep(400_000) },
        expect: (reply) => expect(reply.status).toBe(413),
      },
      {
        name: 'event: invalid UTF-8 as application/octet-stream → 400',
        base,
        r: {
          method: 'POST',
          path: '/api/event',
          headers: { 'content-type': 'application/octet-stream' },
          body: Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0xc3, 0x28, 0x7d]),
        },
        expect: (reply) => expect(reply.status).toBe(400),
      },
      {
        name: 'event: a valid event with invalid UTF-8 inside a string → 202 (decoded with replacement characters)',
        base,
        r: {
          method: 'POST',
          path: '/api/event',
          headers: { 'user-agent': CHROME_UA },
          body: Buffer.concat([
            Buffer.from(`{"n":"goal","u":"https://${SITE}/u","s":"${SITE}","g":"`),
            Buffer.from([0xff, 0xc3, 0x28]),
            Buffer.from('"}'),
          ]),
        },
        expect: (reply) => expect(reply.status).toBe(202),
      },
      {
        name: 'event: 500,000 small numbers in an array (over the ceiling, under 1 MiB) → 413',
        base,
        r: { method: 'POST', path: '/api/event', body: `[${'0,'.repeat(499_999)}0]` },
        expect: (reply) => expect(reply.status).toBe(413),
      },
      {
        name: 'event: 300,000 small numbers in an array (under the ceiling, no event) → 400',
        base,
        r: { method: 'POST', path: '/api/event', body: `[${'0,'.repeat(299_999)}0]` },
        expect: (reply) => expect(reply.status).toBe(400),
      },
      {
        name: 'report API: 1,500 query parameters (near the 16 KiB request-line limit) → 200 or 400 JSON',
        base,
        r: {
          method: 'GET',
          path: `/api/v1/sites/${SITE}/overview?${Array.from({ length: 1_500 }, (_, i) => `p${i}=1`).join('&')}`,
          headers: bearer,
        },
        expect: (reply) => expect([200, 400]).toContain(reply.status),
      },
      {
        name: 'report API: range over 10 years → 400 JSON',
        base,
        r: { method: 'GET', path: `/api/v1/sites/${SITE}/overview?from=2000-01-01&to=2026-03-31`, headers: bearer },
        expect: (reply) => (expect(reply.status).toBe(400), expectJsonError(reply, 'range')),
      },
      {
        name: 'MCP: 1 MiB + 1 byte → 413 JSON',
        base,
        r: { method: 'POST', path: '/mcp', headers: mcpHeaders, body: Buffer.alloc(mib + 1, 0x20) },
        expect: (reply) => (expect(reply.status).toBe(413), expectJsonError(reply, 'mcp 413')),
      },
      {
        name: 'MCP: a batch of 5,000 pings → JSON-RPC answers',
        base,
        r: {
          method: 'POST',
          path: '/mcp',
          headers: mcpHeaders,
          body: JSON.stringify(Array.from({ length: 5_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
        },
        expect: (reply) => expect(reply.status).toBeLessThan(500),
      },
      {
        name: 'MCP: tool arguments nested 100,000 deep (under 1 MiB) → a JSON-RPC answer',
        base,
        r: {
          method: 'POST',
          path: '/mcp',
          headers: mcpHeaders,
          body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_overview","arguments":{"site":${deep(100_000)}}}}`,
        },
        expect: (reply) => expect(reply.status).toBeLessThan(500),
      },
      {
        name: 'MCP: an id of 500,000 characters → a JSON-RPC answer',
        base,
        r: {
          method: 'POST',
          path: '/mcp',
          headers: mcpHeaders,
          body: JSON.stringify({ jsonrpc: '2.0', id: 'i'.repeat(500_000), method: 'tools/list' }),
        },
        expect: (reply) => expect(reply.status).toBe(200),
      },
      {
        name: 'MCP: invalid UTF-8 → a JSON-RPC parse error',
        base,
        r: { method: 'POST', path: '/mcp', headers: mcpHeaders, body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) },
        expect: (reply) => expect(reply.status).toBe(400),
      },
      {
        name: 'webhook: 1 MiB + 1 byte → 413 JSON',
        base: hooksBase,
        r: { method: 'POST', path: `/api/webhooks/stripe/${HOOK_SITE}`, body: Buffer.alloc(mib + 1, 0x20) },
        expect: (reply) => (expect(reply.status).toBe(413), expectJsonError(reply, 'webhook 413')),
      },
      {
        name: 'webhook: a validly signed Stripe event nested 100,000 deep → 400 JSON',
        base: hooksBase,
        r: (() => {
          const body = `{"id":"evt_1","object":"event","type":"charge.succeeded","created":1,"data":{"object":${deep(100_000)}}}`;
          return { method: 'POST', path: `/api/webhooks/stripe/${HOOK_SITE}`, headers: sign('stripe', body), body };
        })(),
        expect: (reply) => (expect(reply.status).toBe(400), expectJsonError(reply, 'deep webhook')),
      },
      {
        name: 'webhook: a validly signed body of invalid UTF-8 → 400 JSON',
        base: hooksBase,
        r: (() => {
          const body = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
          return {
            method: 'POST',
            path: `/api/webhooks/lemonsqueezy/${HOOK_SITE}`,
            headers: sign('lemonsqueezy', body.toString('utf8')),
            body,
          };
        })(),
        expect: (reply) => (expect(reply.status).toBe(400), expectJsonError(reply, 'utf8 webhook')),
      },
    ];
    for (const c of cases) {
      const reply = await fire('special', c.base, c.r);
      try {
        c.expect(reply);
      } catch (error) {
        throw new Error(`${c.name}: ${describeRequest(c.r, reply)}`, { cause: error });
      }
    }

    // A request line past Node's 16 KiB header limit, and a request that is not HTTP at all: Node's own parser answers (431/400) and the server lives on.
    const longLine = await send(base, {
      method: 'GET',
      path: `/api/v1/sites/${'a'.repeat(20_000)}/overview`,
      headers: bearer,
    }).catch((e: Error) => e);
    expect(longLine instanceof Error ? longLine.message : longLine.status).not.toBe(500);
    const garbage = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1', () =>
        socket.end('\x00\x01GARBAGE / HTTP/9.9\r\n\r\n'),
      );
      let data = '';
      socket.on('data', (d) => (data += String(d)));
      socket.on('close', () => resolve(data));
      socket.on('error', () => resolve(data));
    });
    expect(garbage.startsWith('HTTP/1.1 5')).toBe(false);
    await healthy();
  });

  it('afterwards: the server is healthy, and the accepted hostile events were sessionized and archived without a failed batch', async () => {
    await healthy();
    // Both reject if a batch fails (the poller retries it forever otherwise); then both checkpoints are at the end of the stream.
    await s.svc.sessionize();
    await s.svc.archive();
    await waitForCatchUp(s.svc.dataDir, 10_000);
    const { records } = await readLocalStream(localPaths(s.svc.dataDir).stream, 0, Number.MAX_SAFE_INTEGER);
    await report('fuzz', { ...stats, hostileEventsSessionizedAndArchived: records.length, runs: RUNS });
    expect(stats.requests).toBeGreaterThan(LONG ? 100_000 : 3_000);
    expect(Object.keys(stats.byStatus).filter((status) => Number(status) >= 500)).toEqual([]);
  });
});
