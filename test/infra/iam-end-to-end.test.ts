import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { parsePaymentLine } from '../../lambdas/domain/payments/import-line.js';
import { importEventLines } from '../../local/import-events.js';
import { localPaths, startLocalService, type LocalService } from '../../local/service.js';
import { iamStats, usePolicies } from '../../local/iam/authorizer.js';
import { loadPolicies } from '../../local/iam/policies.js';
import { main } from '../../cli/main.js';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { CHROME_UA } from '../support/events.js';
import { fixture } from '../payments/fixture.js';
import { signWebhook } from '../support/webhook-signature.js';

/**
 * The whole local stack under IAM (`docs/security.md` "IAM in the local twin"): every function's code runs through its own role's
 * synthesized policy (`local/iam/`), and one pass over what a site owner does — events, webhooks of
 * the four providers, imports of events and payments, the sessionizer and the scheduled work, a
 * rebuild, every report of the API including retention, the app's settings and every MCP tool —
 * is refused nothing. Then one partition taken out of one function's list fails its route.
 */
const SITE = 'shop.test';
const SECRETS = {
  stripe: 'whsec_iam_end_to_end',
  lemonsqueezy: 'iam-end-to-end-lemon',
  paddle: 'pdl_ntfset_iam_end_to_end',
  polar: 'polar_whs_iam_end_to_end',
} as const;
type Provider = keyof typeof SECRETS;
const HOOKS: Array<[Provider, string]> = [
  ['stripe', 'payment_intent.succeeded.json'],
  ['lemonsqueezy', 'order_created.json'],
  ['paddle', 'transaction.completed.json'],
  ['polar', 'order.paid.json'],
];
const RANGE = 'from=2025-01-01&to=2026-12-31';
const REPORTS = [
  '',
  '/overview',
  '/timeseries',
  '/breakdown/channel',
  '/breakdown/page',
  '/breakdown/country',
  '/properties',
  '/payments',
  '/goals',
  '/realtime',
  '/retention',
  '/visitors/visitor-e2e-1',
];

/** `footfall <args>` in this process, quiet; resolves with its exit code. */
async function cli(...args: string[]): Promise<number> {
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return await main(args);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('the local stack with every function under its own policy', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let running: LocalService;
  let key: string;
  const before = { requests: 0, denials: 0 };

  beforeAll(async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    running = svc;
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'iam-e2e', new Date())).key;
    await addUser(svc.dynamo, 'owner@shop.test', 'acme', 'correct horse battery staple', CHEAP_SCRYPT);
    Object.assign(before, { requests: iamStats.requests, denials: iamStats.denials });
    iamStats.triples.clear();
  }, 120_000);
  afterAll(async () => {
    usePolicies(undefined);
    delete process.env.POWERTOOLS_LOG_LEVEL;
    await running.close();
    await svc.cleanup();
  });

  const report = (path: string) =>
    fetch(`${running.url}/api/v1/sites${path ? `/${SITE}${path}` : ''}?${RANGE}`, {
      headers: { authorization: `Bearer ${key}` },
    });

  it('serves everything a site owner does with 0 denials', async () => {
    const app = new AppClient(svc.url);
    expect((await app.signIn('owner@shop.test', 'correct horse battery staple')).status).toBe(200);
    // App settings: the site's attribution, then each provider's webhook secret (sealed with the secrets key).
    expect((await app.call('PATCH', `/api/app/sites/${SITE}`, { attribution: 'first_touch' })).status).toBe(200);
    for (const provider of Object.keys(SECRETS) as Provider[]) {
      const put = await app.call('PUT', `/api/app/sites/${SITE}/providers/${provider}`, {
        webhook_secret: SECRETS[provider],
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    }
    expect((await app.call('GET', `/api/app/sites/${SITE}/providers`)).status).toBe(200);
    expect((await app.call('GET', '/api/app/keys')).status).toBe(200);

    // Live events (the event function), then imported ones (the CLI's path onto the stream).
    for (const [path, extra] of [
      ['/', { r: 'https://www.google.com/' }],
      ['/pricing', {}],
    ] as const) {
      const res = await fetch(`${svc.url}/api/event`, {
        method: 'POST',
        headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' },
        body: JSON.stringify({ n: 'pageview', u: `https://${SITE}${path}`, s: SITE, ...extra }),
      });
      expect(res.status).toBe(202);
    }
    const goal = await fetch(`${svc.url}/api/event`, {
      method: 'POST',
      headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' },
      body: JSON.stringify({ n: 'Signup', u: `https://${SITE}/pricing`, s: SITE }),
    });
    expect(goal.status).toBe(202);
    const lines = [0, 1, 2].map((day) =>
      JSON.stringify({
        n: 'pageview',
        u: `https://${SITE}/blog/${day}`,
        ts: new Date(Date.UTC(2026, 5, 1 + day * 20, 10)).toISOString(),
        v: 'visitor-e2e-1',
        ua: CHROME_UA,
        ...(day === 0 ? { r: 'https://news.ycombinator.com/' } : {}),
      }),
    );
    await importEventLines(svc.dynamo, localPaths(svc.dataDir).stream, lines, { site: SITE });
    expect(await svc.sessionize()).toBeGreaterThanOrEqual(5);
    expect(await svc.archive()).toBeGreaterThanOrEqual(5);

    // Webhooks of the four providers (the webhook function: provider secret, KMS Decrypt, settlement).
    for (const [provider, name] of HOOKS) {
      const body = fixture(provider, name);
      const res = await fetch(`${svc.url}/api/webhooks/${provider}/${SITE}`, {
        method: 'POST',
        headers: { ...signWebhook(provider, body, SECRETS[provider]), 'content-type': 'application/json' },
        body,
      });
      expect(res.status, `${provider} ${await res.text()}`).toBe(200);
    }
    // Imported payments: a purchase and a renewal of the imported visitor, so retention has a cohort.
    const site = (await new DynamoConfigStore(svc.dynamo).getSite(SITE))!;
    const payments = [0, 1].map((month) =>
      JSON.stringify({
        provider: 'stripe',
        provider_payment_id: `pi_e2e_${month}`,
        ts: new Date(Date.UTC(2026, 5 + month, 2, 12)).toISOString(),
        amount: 2900,
        currency: 'USD',
        customer_id: 'cus_e2e',
        visitor_id: 'visitor-e2e-1',
        is_renewal: month > 0,
        subscription_id: 'sub_e2e',
      }),
    );
    await importPayments(
      dynamoPaymentDeps(svc.dynamo),
      site,
      payments.map((line, i) => parsePaymentLine(line, i + 1)),
    );
    await svc.scheduled();

    // A rebuild as the operator runs it (the CLI holds the data directory: the service stops meanwhile).
    await svc.close();
    expect(await cli('--data', svc.dataDir, '--json', 'rebuild', '--site', SITE)).toBe(0);
    running = await startLocalService({
      dataDir: svc.dataDir,
      port: 0,
      app: true,
      sessionizeIntervalMs: 0,
      dynaliteThread: false,
    });

    // Every report of the API (the report function), retention included.
    for (const path of REPORTS) {
      const res = await report(path);
      expect(res.status, `${path} ${await res.clone().text()}`).toBe(200);
    }
    // The imported customer, from Hacker News, with its purchase and renewal.
    const retention = (await (await report('/retention')).json()) as { channels: Array<Record<string, unknown>> };
    expect(retention.channels).toContainEqual(
      expect.objectContaining({ label: 'Communities', customers: 1, net_ltv_usd: 58 }),
    );

    // Every MCP tool (the MCP function), through the JSON-RPC endpoint.
    const rpc = async (id: number, method: string, params: unknown) => {
      const res = await fetch(`${running.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { result?: { isError?: boolean; tools?: Array<{ name: string }> } };
    };
    const tools = (await rpc(1, 'tools/list', {})).result?.tools?.map((t) => t.name) ?? [];
    expect(tools.length).toBeGreaterThanOrEqual(9);
    const args: Record<string, Record<string, unknown>> = {
      list_sites: {},
      get_breakdown: { site: SITE, dimension: 'channel', from: '2025-01-01', to: '2026-12-31' },
      get_visitor_timeline: { site: SITE, visitor_id: 'visitor-e2e-1' },
      get_realtime: { site: SITE },
    };
    for (const [i, name] of tools.entries()) {
      const result = await rpc(10 + i, 'tools/call', {
        name,
        arguments: args[name] ?? { site: SITE, from: '2025-01-01', to: '2026-12-31' },
      });
      expect(result.result?.isError ?? false, `${name} ${JSON.stringify(result)}`).toBe(false);
    }

    const triples = [...iamStats.triples].sort();
    const requests = iamStats.requests - before.requests;
    console.log(
      `IAM end to end: ${requests} requests evaluated, ${iamStats.denials - before.denials} denied, ${triples.length} distinct (function, action, partition):\n${triples.join('\n')}`,
    );
    expect(iamStats.denials - before.denials).toBe(0);
    const functions = new Set(triples.map((t) => t.split(' ')[0]));
    for (const f of ['event', 'sessionize', 'report', 'mcp', 'webhook', 'app', 'scheduled', 'archiveDestination'])
      expect(functions, f).toContain(f);
  }, 600_000);

  it("fails retention when CH# is taken out of the report function's partitions", async () => {
    const policies = structuredClone(loadPolicies());
    let removed = 0;
    for (const statement of policies.report ?? [])
      for (const keys of Object.values(statement.Condition ?? {})) {
        const leading = keys['dynamodb:LeadingKeys'];
        if (!Array.isArray(leading)) continue;
        keys['dynamodb:LeadingKeys'] = leading.filter((p) => !p.startsWith('CH#'));
        removed += leading.length - keys['dynamodb:LeadingKeys'].length;
      }
    expect(removed).toBeGreaterThan(0);
    usePolicies(policies);
    try {
      expect((await report('/overview')).status).toBe(200);
      expect((await report('/retention')).status).toBeGreaterThanOrEqual(500);
    } finally {
      usePolicies(undefined);
    }
    expect((await report('/retention')).status).toBe(200);
  }, 120_000);
});
