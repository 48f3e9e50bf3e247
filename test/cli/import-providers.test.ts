import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHistory } from '../../cli/history.js';
import type { HistorySource } from '../../lambdas/domain/payments/history-source.js';
import { HistoryApiError, retryAfterMs } from '../../lambdas/adapters/history/api.js';
import { lemonSqueezySource } from '../../lambdas/adapters/history/lemonsqueezy.js';
import { paddleSource } from '../../lambdas/adapters/history/paddle.js';
import { polarSource } from '../../lambdas/adapters/history/polar.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import type { ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import type { ProviderModule } from '../../lambdas/domain/payments/providers/common.js';
import { lemonSqueezyProvider } from '../../lambdas/domain/payments/providers/lemonsqueezy.js';
import { paddleProvider } from '../../lambdas/domain/payments/providers/paddle.js';
import { polarProvider } from '../../lambdas/domain/payments/providers/polar.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { ApiStandIn, type StandInAnswer } from '../support/api-stand-in.js';
import { PADDLE, paddleApi } from '../support/paddle-stand-in.js';
import { runCliInProcess } from '../support/cli.js';
import { openLocalStore } from '../../local/service.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { ownAlias } from '../support/comparable-items.js';
import { site } from '../support/events.js';

/**
 * `footfall import lemonsqueezy|paddle|polar` against stand-ins of each
 * provider's list endpoints in this process, serving the objects of the
 * webhook fixtures (`test/fixtures/payments/<provider>/SOURCES.md`: each
 * provider's documented example objects) in their final state, two a page
 * (fewer than asked, as an API may), with each provider's own pagination, and
 * a 429 or a 500 where a test asks for one. The history's facts and rows are
 * held against webhook deliveries of the same objects, each at the time its
 * object states.
 */

type Json = Record<string, unknown>;
const fixture = async (provider: string, name: string) =>
  JSON.parse(await readFile(new URL(`../fixtures/payments/${provider}/${name}.json`, import.meta.url), 'utf8')) as Json;
const dataOf = async (provider: string, name: string) => (await fixture(provider, name)).data as Json;
const PER_PAGE = 2;

// Lemon Squeezy (https://docs.lemonsqueezy.com/api/orders/the-order-object, /subscription-invoices/…, /subscriptions/…):
// an order paid, one refunded in full, one pending; the subscription's initial and partly refunded renewal invoices.
const lsOrder3 = await dataOf('lemonsqueezy', 'order_created.eur');
const LS: Record<string, Json[]> = {
  orders: [
    await dataOf('lemonsqueezy', 'order_created'),
    await dataOf('lemonsqueezy', 'order_refunded.full'),
    { ...lsOrder3, id: '3', attributes: { ...(lsOrder3.attributes as Json), status: 'pending' } },
  ],
  'subscription-invoices': [
    await dataOf('lemonsqueezy', 'subscription_payment_success.initial'),
    await dataOf('lemonsqueezy', 'subscription_payment_refunded'),
  ],
  subscriptions: [await dataOf('lemonsqueezy', 'subscription_expired')],
};

/** JSON:API pages by `page[number]` (https://docs.lemonsqueezy.com/api/getting-started/requests#pagination). */
function lemonSqueezyApi(path: string, q: URLSearchParams): StandInAnswer {
  const list = LS[path.replace(/^\/v1\//, '')] ?? [];
  const number = Number(q.get('page[number]') ?? 1);
  const lastPage = Math.max(1, Math.ceil(list.length / PER_PAGE));
  const data = list.slice((number - 1) * PER_PAGE, number * PER_PAGE);
  return {
    status: 200,
    body: {
      meta: { page: { currentPage: number, from: 1, lastPage, perPage: PER_PAGE, to: 2, total: list.length } },
      jsonapi: { version: '1.0' },
      data,
    },
  };
}

/** What the webhooks of the same resources delivered: custom data only reaches webhooks, so the history has none to compare. */
function lemonSqueezyWebhooks(): unknown[] {
  const [o1, o2] = LS.orders!;
  const [i1, i2] = LS['subscription-invoices']!;
  const deliveries: Array<[string, Json]> = [
    ['order_created', o1!],
    ['order_created', o2!],
    ['order_refunded', o2!],
    ['subscription_payment_success', i1!],
    ['subscription_payment_success', i2!],
    ['subscription_payment_refunded', i2!],
    ['subscription_expired', LS.subscriptions![0]!],
  ];
  return deliveries.map(([event_name, data]) => ({ meta: { event_name, custom_data: null }, data }));
}

function paddleWebhooks(): unknown[] {
  const [, t1, t2, t3] = PADDLE.transactions!;
  const [, a1, a2] = PADDLE.adjustments!;
  const deliveries: Array<[string, Json, unknown]> = [
    ['transaction.completed', t1!, t1!.billed_at],
    ['transaction.completed', t2!, t2!.billed_at],
    ['transaction.completed', t3!, t3!.billed_at],
    ['adjustment.updated', a1!, a1!.updated_at],
    ['adjustment.updated', a2!, a2!.updated_at],
    ['subscription.canceled', PADDLE.subscriptions![0]!, PADDLE.subscriptions![0]!.updated_at],
  ];
  return deliveries.map(([event_type, data, occurred_at], i) => ({
    event_id: `evt_${i}`,
    event_type,
    occurred_at,
    notification_id: `ntf_${i}`,
    data,
  }));
}

// Polar (https://polar.sh/docs/api-reference/orders/get, /subscriptions/get): a subscription's first order, its
// renewal refunded in full, a EUR purchase; the subscription revoked.
const POLAR: Record<string, Json[]> = {
  orders: [
    await dataOf('polar', 'order.paid'),
    await dataOf('polar', 'order.refunded.full'),
    await dataOf('polar', 'order.created.paid.eur'),
  ],
  subscriptions: [await dataOf('polar', 'subscription.revoked')],
};

/** Pages by `page`/`limit` with `pagination.max_page` (https://polar.sh/docs/api-reference/orders/list). */
function polarApi(path: string, q: URLSearchParams): StandInAnswer {
  const list = POLAR[path.replace(/^\/v1\/|\/$/g, '')] ?? [];
  const page = Number(q.get('page') ?? 1);
  return {
    status: 200,
    body: {
      items: list.slice((page - 1) * PER_PAGE, page * PER_PAGE),
      pagination: { total_count: list.length, max_page: Math.ceil(list.length / PER_PAGE) },
    },
  };
}

function polarWebhooks(): unknown[] {
  const [o1, o2, o3] = POLAR.orders!;
  const deliveries: Array<[string, Json, unknown]> = [
    ['order.paid', o1!, o1!.created_at],
    ['order.paid', o2!, o2!.created_at],
    ['order.refunded', o2!, o2!.modified_at],
    ['order.created', o3!, o3!.created_at],
    ['subscription.revoked', POLAR.subscriptions![0]!, POLAR.subscriptions![0]!.modified_at],
  ];
  return deliveries.map(([type, data, timestamp]) => ({ type, timestamp, data }));
}

interface Case {
  name: string;
  provider: ProviderModule;
  api: (path: string, q: URLSearchParams) => StandInAnswer;
  source: (api: URL) => HistorySource<string>;
  lists: Record<string, Json[]>;
  webhooks: () => unknown[];
  /** PAYMENT rows both paths leave. */
  payments: number;
  /** The list a failure is injected into, its path, and the requests of it before and after its second page. */
  paged: { path: string; first: string; second: string };
}

const CASES: Case[] = [
  {
    name: 'lemonsqueezy',
    provider: lemonSqueezyProvider,
    api: lemonSqueezyApi,
    source: (api) => lemonSqueezySource('eyJ0.eyJ1.sig', api, '1'),
    lists: LS,
    webhooks: lemonSqueezyWebhooks,
    payments: 3,
    paged: {
      path: '/v1/orders',
      first: '/v1/orders?page[number]=1&page[size]=100&filter[store_id]=1',
      second: '/v1/orders?page[number]=2&page[size]=100&filter[store_id]=1',
    },
  },
  {
    name: 'paddle',
    provider: paddleProvider,
    api: paddleApi,
    source: (api) => paddleSource('pdl_sdbx_apikey_history', api),
    lists: PADDLE,
    webhooks: paddleWebhooks,
    payments: 3,
    paged: {
      path: '/adjustments',
      first: '/adjustments?per_page=200&action=refund',
      second: '/adjustments?per_page=200&action=refund&after=adj_01h8c6tbrkpdd7vx61w7b1r0ap',
    },
  },
  {
    name: 'polar',
    provider: polarProvider,
    api: polarApi,
    source: (api) => polarSource('polar_oat_history', api),
    lists: POLAR,
    webhooks: polarWebhooks,
    payments: 3,
    paged: {
      path: '/v1/orders/',
      first: '/v1/orders/?page=1&limit=100&sorting=created_at',
      second: '/v1/orders/?page=2&limit=100&sorting=created_at',
    },
  },
];

let dir = '';
let api: ApiStandIn | null = null;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ff-import-providers-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await api?.close();
  api = null;
});

async function standIn(c: Case): Promise<{ api: ApiStandIn; base: URL; source: HistorySource<string> }> {
  api = new ApiStandIn(c.api);
  const base = await api.start();
  return { api, base, source: c.source(base) };
}

const everything = { since: null, until: null };
const quick = { backoffMs: () => 1 };
const checkpoint = (name: string) => join(dir, `${name}.jsonl`);
const sorted = (facts: readonly ProviderFacts[]) =>
  facts
    .flatMap((f) => [...f.payments, ...f.subscriptions, ...f.customers])
    .map((f) => JSON.stringify(f))
    .sort();

describe.each(CASES)('footfall import $name: reading the history', (c) => {
  it('pages through every list and states the facts the webhooks of the same objects stated', async () => {
    const { api, source } = await standIn(c);
    const history = await readHistory(source, { range: everything, checkpoint: checkpoint(`${c.name}-all`), ...quick });
    expect(history.invalid).toEqual([]);
    expect(api.requests).toContain(c.paged.second);
    const webhooks = c.webhooks().map((e) => c.provider.facts(e)!);
    expect(sorted(history.facts)).toEqual(sorted(webhooks));
    expect(history.facts.flatMap((f) => f.payments).length).toBeGreaterThan(0);
  });

  it('ends with the same payments, customers, lists and cohorts as the webhooks, through the bulk import, pages read twice or not', async () => {
    const { source } = await standIn(c);
    const history = await readHistory(source, {
      range: everything,
      checkpoint: checkpoint(`${c.name}-rows`),
      ...quick,
    });
    const imported = await memoryTable();
    const hooked = await memoryTable();
    try {
      // Every fact twice: a page read again (an object made during the import pushed it on) changes nothing.
      await importPayments(dynamoPaymentDeps(imported.conn), site(), [...history.facts, ...history.facts]);
      for (const event of c.webhooks())
        await applyProviderFacts(dynamoPaymentDeps(hooked.conn), site(), c.provider.facts(event)!);
      // Versions and counters count writes, which differ between one bulk write and a write per delivery.
      const omit = ['rev', 'ver', 'src', 'n'];
      const types = new Set([
        'PAYMENT',
        'PAYMENT_ALIAS',
        'CUSTOMER',
        'PAYER_STATE',
        'COHORT_MEMBER',
        'PAYMENT_LIST',
        'PAYMENT_LIST_REFUNDED',
        'VISITOR_PAYMENT',
      ]);
      const rows = async (conn: typeof imported.conn) =>
        (await scanAll(conn, omit))
          .filter((i) => types.has(String(i.type)) && !ownAlias(i))
          .map((i) => (typeof i.c === 'string' ? { ...i, c: { ...(JSON.parse(i.c) as Json), rev: null } } : i));
      const got = await rows(imported.conn);
      expect(got.filter((i) => i.type === 'PAYMENT')).toHaveLength(c.payments);
      expect(got).toEqual(await rows(hooked.conn));
    } finally {
      await imported.close();
      await hooked.close();
    }
  });

  it('asks the page again after a 429, no sooner than its Retry-After, from the same cursor', async () => {
    const { api, source } = await standIn(c);
    api.fail = {
      path: c.paged.path,
      nth: 2,
      answer: { status: 429, body: { error: 'rate limited' }, headers: { 'retry-after': '1' } },
    };
    const started = Date.now();
    const history = await readHistory(source, { range: everything, checkpoint: checkpoint(`${c.name}-429`), ...quick });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const paged = api.requests.filter((r) => r.startsWith(`${c.paged.path}?`));
    expect(paged).toEqual([c.paged.first, c.paged.second, c.paged.second]);
    expect(history.objects).toBe(Object.values(c.lists).flat().length - (c.name === 'paddle' ? 1 : 0));
  });

  it('resumes after a failure from its checkpoint: finished lists are not read again, the other at its cursor', async () => {
    const { api, source } = await standIn(c);
    api.fail = { path: c.paged.path, nth: 2, answer: { status: 500, body: { error: 'boom' } } };
    const file = checkpoint(`${c.name}-crash`);
    await expect(readHistory(source, { range: everything, checkpoint: file, ...quick })).rejects.toThrow(
      HistoryApiError,
    );
    const before = api.requests.length;
    api.fail = null;
    const resumed = await readHistory(source, { range: everything, checkpoint: file, ...quick });
    const again = api.requests.slice(before);
    expect(again[0]).toBe(c.paged.second);
    expect(again.filter((r) => r === c.paged.first)).toEqual([]);
    const whole = await readHistory(source, { range: everything, checkpoint: checkpoint(`${c.name}-whole`), ...quick });
    expect(sorted(resumed.facts)).toEqual(sorted(whole.facts));
    expect(resumed.objects).toBe(whole.objects);
  });
});

describe('the date range', () => {
  it('keeps only objects created within it, and starts over when it changes', async () => {
    const { api, source } = await standIn(CASES[1]!);
    const file = checkpoint('paddle-range');
    const since = Date.parse('2023-08-20T00:00:00Z') / 1000;
    const history = await readHistory(source, { range: { since, until: null }, checkpoint: file, ...quick });
    expect(api.requests[0]).toBe(
      '/transactions?per_page=200&status=completed&created_at[GTE]=2023-08-20T00:00:00.000Z',
    );
    const ids = [...new Set(history.facts.flatMap((f) => f.payments.map((p) => p.id)))].sort();
    // The EUR purchase, the renewal, and the first payment only through its refund (made after `since`).
    expect(ids).toEqual([
      'txn_01h7hst69d7tar4rm6vyeb0j36',
      'txn_01h8f7sq2v5e6r7t8y9u0i1o2p',
      'txn_01h9x4b8mzv6r5q7c2k1d3f9e0',
    ]);
    const first = history.facts.flatMap((f) => f.payments).filter((p) => p.id === 'txn_01h7hst69d7tar4rm6vyeb0j36');
    expect(first.map((p) => [p.amount, p.refunds])).toEqual([
      [undefined, [{ id: 'adj_01h8c6tbrkpdd7vx61w7b1r0ap', amount: 100 }]],
    ]);
    expect(history.facts.flatMap((f) => f.subscriptions)).toEqual([]);
    const before = api.requests.length;
    await readHistory(source, { range: everything, checkpoint: file, ...quick });
    expect(api.requests[before]).toBe('/transactions?per_page=200&status=completed');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-03-01T10:00:00Z');
    expect(retryAfterMs('60', now)).toBe(60_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs(null, now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
  });
});

describe('the command', () => {
  it('footfall import lemonsqueezy reads the store given, imports its payments and deletes its checkpoint', async () => {
    const data = join(dir, 'cli');
    // The site, written directly; the command runs in this process (a child would load Node, the CLI and the AWS
    // SDK again), which keeps serving the stand-in while the command awaits it.
    const local = await openLocalStore(data, 'cli');
    try {
      const config = new DynamoConfigStore(local.dynamo);
      await config.addAccount('acme', new Date());
      await config.addSite(site());
    } finally {
      local.dynamo.doc.destroy();
      await local.db.close();
    }
    const { api, base } = await standIn(CASES[0]!);
    const run = await runCliInProcess(
      ['--data', data, '--json', 'import', 'lemonsqueezy', '--site', 'example.com', '--store', '7'],
      {
        FOOTFALL_LEMONSQUEEZY_API: base.href,
        LEMONSQUEEZY_API_KEY: 'eyJ0.eyJ1.sig',
      },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ objects: 6, payments: 3, invalid: 0, errors: [] });
    expect(api.requests[0]).toBe('/v1/orders?page[number]=1&page[size]=100&filter[store_id]=7');
    await expect(access(join(data, 'imports', 'lemonsqueezy-example.com.jsonl'))).rejects.toThrow();
  });
});
