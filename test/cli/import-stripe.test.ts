import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stripe } from 'stripe';
import { readHistory } from '../../cli/history.js';
import { stripeSource } from '../../lambdas/adapters/history/stripe.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import type { ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import { stripeProvider } from '../../lambdas/domain/payments/providers/stripe.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { ownAlias } from '../support/comparable-items.js';
import { site } from '../support/events.js';

/**
 * `footfall import stripe` against a stand-in of the Stripe API in this
 * process: the list endpoints the import reads, serving variants of Stripe's
 * own example objects (`test/fixtures/payments/stripe/api-objects.json`,
 * stripe/openapi's fixtures3.json) newest first, two a page (fewer than the
 * `limit` asked, as the API may), with `starting_after` and `created[gte|lt]`,
 * and a 429 where a test asks for one. The history's facts and rows are held
 * against the webhook deliveries of the same objects.
 */

type Json = Record<string, unknown>;
const fixtures = JSON.parse(
  await readFile(new URL('../fixtures/payments/stripe/api-objects.json', import.meta.url), 'utf8'),
) as Record<string, Json>;

const DAY = 86_400;
const T0 = Date.parse('2026-03-02T10:00:00Z') / 1000;
const visitor = { footfall_visitor_id: 'visitor-a' };

const of = (kind: string, fields: Json): Json => ({ ...fixtures[kind], ...fields });
const customer = (id: string, created: number, metadata: Json) => of('customer', { id, created, metadata });
const charge = (id: string, created: number, fields: Json) =>
  of('charge', { id, created, status: 'succeeded', amount_refunded: 0, refunded: false, metadata: {}, ...fields });
const intent = (id: string, created: number, fields: Json) =>
  of('payment_intent', { id, created, status: 'succeeded', metadata: {}, ...fields });
const invoice = (id: string, paidAt: number, fields: Json) =>
  of('invoice', {
    id,
    created: paidAt - 3600,
    status: 'paid',
    customer: 'cus_A',
    metadata: {},
    status_transitions: { paid_at: paidAt },
    parent: { subscription_details: { subscription: 'sub_A', metadata: visitor } },
    ...fields,
  });
const invoicePayment = (id: string, created: number, inv: string, pi: string) => ({
  id,
  object: 'invoice_payment',
  created,
  status: 'paid',
  invoice: inv,
  payment: { type: 'payment_intent', payment_intent: pi },
});

/** The account: a one-off Checkout purchase refunded in part, a subscription paid twice (EUR, then a JPY renewal refunded in full), a failed attempt, a charge alone, and objects that moved no money. */
const OBJECTS: Record<string, Json[]> = {
  customers: [customer('cus_A', T0, visitor), customer('cus_B', T0 + 10, {})],
  subscriptions: [
    of('subscription', { id: 'sub_A', customer: 'cus_A', created: T0 + DAY, status: 'active', metadata: visitor }),
  ],
  'checkout/sessions': [
    of('checkout.session', {
      id: 'cs_1',
      created: T0 + 100,
      status: 'complete',
      mode: 'payment',
      payment_status: 'paid',
      amount_total: 2000,
      currency: 'usd',
      payment_intent: 'pi_1',
      customer: 'cus_A',
      metadata: visitor,
    }),
    of('checkout.session', { id: 'cs_open', created: T0 + 200 }),
  ],
  payment_intents: [
    intent('pi_1', T0 + 110, {
      amount: 2000,
      amount_received: 2000,
      currency: 'usd',
      customer: 'cus_A',
      latest_charge: 'ch_1',
    }),
    intent('pi_2', T0 + DAY + 50, {
      amount: 1500,
      amount_received: 1500,
      currency: 'eur',
      customer: 'cus_A',
      latest_charge: 'ch_2',
    }),
    intent('pi_3', T0 + 31 * DAY, {
      amount: 1200,
      amount_received: 1200,
      currency: 'jpy',
      customer: 'cus_A',
      latest_charge: 'ch_3',
    }),
    intent('pi_4', T0 + 40 * DAY, {
      status: 'requires_payment_method',
      amount: 990,
      currency: 'gbp',
      customer: 'cus_B',
      last_payment_error: { code: 'card_declined' },
    }),
  ],
  invoices: [
    invoice('in_2', T0 + DAY + 60, {
      amount_paid: 1500,
      amount_due: 1500,
      currency: 'eur',
      billing_reason: 'subscription_create',
    }),
    invoice('in_3', T0 + 31 * DAY + 10, {
      amount_paid: 1200,
      amount_due: 1200,
      currency: 'jpy',
      billing_reason: 'subscription_cycle',
    }),
    fixtures.invoice!,
  ],
  invoice_payments: [
    invoicePayment('inpay_2', T0 + DAY + 60, 'in_2', 'pi_2'),
    invoicePayment('inpay_3', T0 + 31 * DAY + 10, 'in_3', 'pi_3'),
  ],
  charges: [
    charge('ch_1', T0 + 110, {
      amount: 2000,
      currency: 'usd',
      payment_intent: 'pi_1',
      customer: 'cus_A',
      amount_refunded: 500,
    }),
    charge('ch_2', T0 + DAY + 55, { amount: 1500, currency: 'eur', payment_intent: 'pi_2', customer: 'cus_A' }),
    charge('ch_3', T0 + 31 * DAY + 5, {
      amount: 1200,
      currency: 'jpy',
      payment_intent: 'pi_3',
      customer: 'cus_A',
      amount_refunded: 1200,
      refunded: true,
    }),
    charge('ch_4', T0 + 40 * DAY, {
      status: 'failed',
      amount: 990,
      currency: 'gbp',
      payment_intent: 'pi_4',
      customer: 'cus_B',
    }),
    charge('ch_6', T0 + 45 * DAY, { amount: 4900, currency: 'usd', metadata: visitor }),
  ],
};

/**
 * What the webhooks of the same objects delivered (https://docs.stripe.com/api/events/types), in
 * time order; each state's event at the time its object states (a checkout completed as it was
 * created), so the payments' times agree with the listed objects'.
 */
function webhookEvents(): Array<{ id: string; type: string; created: number; data: { object: Json } }> {
  const find = (list: string, id: string) => OBJECTS[list]!.find((o) => o.id === id)!;
  const deliveries: Array<[string, string, string, number]> = [
    ['customers', 'cus_A', 'customer.created', T0],
    ['customers', 'cus_B', 'customer.created', T0 + 10],
    ['checkout/sessions', 'cs_1', 'checkout.session.completed', T0 + 100],
    ['payment_intents', 'pi_1', 'payment_intent.succeeded', T0 + 110],
    ['charges', 'ch_1', 'charge.succeeded', T0 + 110],
    ['charges', 'ch_1', 'charge.refunded', T0 + 5 * DAY],
    ['subscriptions', 'sub_A', 'customer.subscription.created', T0 + DAY],
    ['payment_intents', 'pi_2', 'payment_intent.succeeded', T0 + DAY + 50],
    ['charges', 'ch_2', 'charge.succeeded', T0 + DAY + 55],
    ['invoices', 'in_2', 'invoice.paid', T0 + DAY + 60],
    ['invoice_payments', 'inpay_2', 'invoice_payment.paid', T0 + DAY + 60],
    ['payment_intents', 'pi_3', 'payment_intent.succeeded', T0 + 31 * DAY],
    ['charges', 'ch_3', 'charge.succeeded', T0 + 31 * DAY + 5],
    ['invoices', 'in_3', 'invoice.paid', T0 + 31 * DAY + 10],
    ['invoice_payments', 'inpay_3', 'invoice_payment.paid', T0 + 31 * DAY + 10],
    ['charges', 'ch_3', 'charge.refunded', T0 + 33 * DAY],
    ['payment_intents', 'pi_4', 'payment_intent.payment_failed', T0 + 40 * DAY],
    ['charges', 'ch_4', 'charge.failed', T0 + 40 * DAY],
    ['charges', 'ch_6', 'charge.succeeded', T0 + 45 * DAY],
  ];
  return deliveries.map(([list, id, type, created], i) => ({
    id: `evt_${i}`,
    type,
    created,
    data: { object: find(list, id) },
  }));
}

/** The stand-in: GET /v1/<list>, newest first, two a page; `fail` answers one request with a status instead. */
class StripeStandIn {
  readonly requests: string[] = [];
  fail: { path: string; nth: number; status: number; shouldRetry?: boolean } | null = null;
  private server: Server | null = null;
  private seen = new Map<string, number>();

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = url.pathname.replace(/^\/v1\//, '');
      this.requests.push(`${path}?${url.searchParams.toString()}`);
      const n = (this.seen.get(path) ?? 0) + 1;
      this.seen.set(path, n);
      if (this.fail && this.fail.path === path && this.fail.nth === n) {
        const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': `req_${n}` };
        if (this.fail.shouldRetry !== undefined) headers['stripe-should-retry'] = String(this.fail.shouldRetry);
        res.writeHead(this.fail.status, headers);
        const type = this.fail.status === 429 ? 'rate_limit_error' : 'api_error';
        res.end(JSON.stringify({ error: { type, message: 'Too many requests hit the API too quickly.' } }));
        return;
      }
      const gte = Number(url.searchParams.get('created[gte]') ?? -Infinity);
      const lt = Number(url.searchParams.get('created[lt]') ?? Infinity);
      let list = [...(OBJECTS[path] ?? [])]
        .filter((o) => (o.created as number) >= gte && (o.created as number) < lt)
        .sort((a, b) => (b.created as number) - (a.created as number) || String(b.id).localeCompare(String(a.id)));
      const after = url.searchParams.get('starting_after');
      if (after) list = list.slice(list.findIndex((o) => o.id === after) + 1);
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${n}` });
      res.end(
        JSON.stringify({ object: 'list', url: `/v1/${path}`, has_more: list.length > 2, data: list.slice(0, 2) }),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return String((this.server!.address() as AddressInfo).port);
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

let dir = '';
let api: StripeStandIn;
let stripe: Stripe;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ff-import-stripe-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));
afterEach(async () => api?.close());

async function standIn(retries = 0) {
  api = new StripeStandIn();
  const port = await api.start();
  stripe = new Stripe('rk_test_history', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: retries });
  return api;
}

const sorted = (facts: readonly ProviderFacts[]) =>
  facts
    .flatMap((f) => [...f.payments, ...f.subscriptions, ...f.customers])
    .map((f) => JSON.stringify(f))
    .sort();

const checkpoint = (name: string) => join(dir, `${name}.jsonl`);
const quick = { backoffMs: () => 1 };

/** The generic history reader over the Stripe lists, as `footfall import stripe` runs it. */
const readStripeHistory = (
  client: Stripe,
  options: { checkpoint: string; since?: number; backoffMs: (attempt: number) => number },
) => readHistory(stripeSource(client), { ...options, range: { since: options.since ?? null, until: null } });

describe('footfall import stripe: reading the history', () => {
  it('pages through every list and states the facts the webhooks of the same objects stated', async () => {
    await standIn();
    const history = await readStripeHistory(stripe, { checkpoint: checkpoint('all'), ...quick });
    const all = Object.values(OBJECTS).flat().length;
    expect(history.objects).toBe(all);
    expect(history.invalid).toEqual([]);
    // Two a page: every list was followed to its end with the last object as the cursor.
    expect(api.requests).toContain('charges?limit=100&starting_after=ch_2');
    const webhooks = webhookEvents().map((e) => stripeProvider.facts(e)!);
    expect(sorted(history.facts)).toEqual(sorted(webhooks));
  });

  it('ends with the same payments, customers, list and cohorts as the webhooks, through the bulk import', async () => {
    await standIn();
    const history = await readStripeHistory(stripe, { checkpoint: checkpoint('rows'), ...quick });
    const imported = await memoryTable();
    const hooked = await memoryTable();
    try {
      await importPayments(dynamoPaymentDeps(imported.conn), site(), history.facts);
      for (const event of webhookEvents())
        await applyProviderFacts(dynamoPaymentDeps(hooked.conn), site(), stripeProvider.facts(event)!);
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
          // A list item's copy of its payment carries the revision too.
          .map((i) => (typeof i.c === 'string' ? { ...i, c: { ...(JSON.parse(i.c) as Json), rev: null } } : i));
      const got = await rows(imported.conn);
      expect(got.filter((i) => i.type === 'PAYMENT')).toHaveLength(5);
      expect(got).toEqual(await rows(hooked.conn));
    } finally {
      await imported.close();
      await hooked.close();
    }
  });

  it('goes on after a rate limit (429) from the object after the last one read', async () => {
    await standIn();
    api.fail = { path: 'charges', nth: 2, status: 429 };
    const history = await readStripeHistory(stripe, { checkpoint: checkpoint('429'), ...quick });
    const charges = api.requests.filter((r) => r.startsWith('charges'));
    // Page 1, the 429 on page 2, page 2 again from the same cursor, page 3.
    expect(charges).toEqual([
      'charges?limit=100',
      'charges?limit=100&starting_after=ch_4',
      'charges?limit=100&starting_after=ch_4',
      'charges?limit=100&starting_after=ch_2',
    ]);
    expect(history.objects).toBe(Object.values(OBJECTS).flat().length);

    // The client's own retries take a 429 that the API says to retry.
    await api.close();
    await standIn(2);
    api.fail = { path: 'invoices', nth: 1, status: 429, shouldRetry: true };
    const again = await readStripeHistory(stripe, { checkpoint: checkpoint('429-sdk'), backoffMs: () => 60_000 });
    expect(api.requests.filter((r) => r.startsWith('invoices?'))).toHaveLength(3);
    expect(sorted(again.facts)).toEqual(sorted(history.facts));
  });

  it('resumes after a failure from its checkpoint: finished lists are not read again, the others from their last object', async () => {
    await standIn();
    api.fail = { path: 'charges', nth: 2, status: 500, shouldRetry: false };
    const file = checkpoint('crash');
    await expect(readStripeHistory(stripe, { checkpoint: file, ...quick })).rejects.toThrow(Stripe.errors.StripeError);
    const before = api.requests.length;
    api.fail = null;
    const resumed = await readStripeHistory(stripe, { checkpoint: file, ...quick });
    expect(api.requests.slice(before)).toEqual([
      'charges?limit=100&starting_after=ch_4',
      'charges?limit=100&starting_after=ch_2',
    ]);
    await api.close();
    await standIn();
    const whole = await readStripeHistory(stripe, { checkpoint: checkpoint('whole'), ...quick });
    expect(sorted(resumed.facts)).toEqual(sorted(whole.facts));
    expect(resumed.objects).toBe(whole.objects);
  });

  it('reads only the date range asked, and starts over when the range changes', async () => {
    await standIn();
    const file = checkpoint('range');
    const since = T0 + 30 * DAY;
    const history = await readStripeHistory(stripe, { checkpoint: file, since, ...quick });
    expect(api.requests[0]).toBe(`customers?limit=100&created[gte]=${since}`.replace('[', '%5B').replace(']', '%5D'));
    const ids = history.facts.flatMap((f) => f.payments.map((p) => p.id)).sort();
    expect([...new Set(ids)]).toEqual(['ch_6', 'in_3', 'pi_3', 'pi_4']);
    const first = api.requests.length;
    await readStripeHistory(stripe, { checkpoint: file, ...quick });
    expect(api.requests[first]).toBe('customers?limit=100');
  });
});
