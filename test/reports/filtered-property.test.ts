import { afterAll, beforeAll, expect, it } from 'vitest';
import fc from 'fast-check';
import { localPaths } from '../../local/service.js';
import { importEventLines } from '../../local/import-events.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { parsePaymentLine } from '../../lambdas/domain/payments/import-line.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { reclassify } from '../../lambdas/services/rebuild.js';
import { paymentTableRow, visitRowsOfDays } from '../../lambdas/domain/visit-days.js';
import { namespaceOf } from '../../lambdas/domain/site.js';
import { filtersParam, matches, type Filter } from '../../lambdas/domain/reports/filters.js';
import {
  filteredBreakdown,
  filteredGoals,
  filteredOverview,
  filteredTimeseries,
  type CreditedPayment,
  type FilteredInput,
} from '../../lambdas/domain/reports/filtered.js';
import { usd } from '../../lambdas/domain/reports/periods.js';
import { OUTBOUND_GOAL } from '../../lambdas/domain/visit.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { startTestService } from '../support/local.js';
import { CHROME_UA, site as siteOf } from '../support/events.js';
import { reliabilityOnly } from '../support/suite.js';

/**
 * The filters' property (`docs/api.md`, "Filters"): for random sites (page views, goals and custom properties
 * of a few visitors over two days; payments credited or not, renewals, partial and full refunds) sent
 * through the local server's real paths (event import, sessionizer, archive, operations run writing the
 * visit and payments tables), and random filters, every report of the report API with `filters` equals a
 * direct computation over the archive's events (sessionized in memory by the rules of `visitRowsOfDays`)
 * and the stored payments (`filtered.ts`'s reference), and a filter that matches every visit gives the
 * unfiltered answers less the Unattributed payments. Seed printed; `FOOTFALL_SEED` replays it.
 */
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const FROM = '2026-03-10';
const TO = '2026-03-11';
const RANGE = { from: FROM, to: TO, timezone: 'UTC' };
const VISITORS = ['visitor-a', 'visitor-b', 'visitor-c', 'visitor-d'];
const PAGES = ['/', '/blog', '/pricing'];
const EVERYTHING = [['contains', 'visit:channel', ['']]];

const minuteOf = (m: number) => new Date(Date.parse(`${FROM}T00:00:00Z`) + m * 60_000).toISOString();
const eventArb = fc.record({
  visitor: fc.constantFrom(...VISITORS),
  minute: fc.integer({ min: 0, max: 2 * 24 * 60 - 1 }),
  goal: fc.option(fc.constantFrom('Signup', 'Purchase', OUTBOUND_GOAL), { freq: 3 }),
  // An outbound click's URL (none: the click counts for the goal only).
  link: fc.option(fc.constantFrom('https://a.example/', 'https://b.example/x'), { freq: 4 }),
  page: fc.constantFrom(...PAGES),
  ref: fc.option(fc.constantFrom('https://www.google.com/', 'https://news.ycombinator.com/')),
  plan: fc.option(fc.constantFrom('pro', 'free')),
});
const paymentArb = fc.record({
  visitor: fc.constantFrom(...VISITORS, 'visitor-z'),
  minute: fc.integer({ min: 0, max: 2 * 24 * 60 - 1 }),
  amount: fc.integer({ min: 100, max: 10_000 }),
  refund: fc.constantFrom('none', 'none', 'part', 'full'),
  renewal: fc.boolean(),
});
const conditionArb = fc.oneof(
  fc.tuple(fc.constantFrom('is', 'is_not'), fc.constant('visit:channel'), fc.constant(['Search'])),
  fc.tuple(fc.constantFrom('contains', 'contains_not'), fc.constant('event:page'), fc.constant(['blog'])),
  fc.tuple(fc.constantFrom('is', 'is_not'), fc.constant('event:goal'), fc.constant(['Signup'])),
  fc.tuple(fc.constantFrom('is', 'is_not'), fc.constant('event:props:plan'), fc.constantFrom(['pro'], [''])),
  fc.tuple(fc.constant('matches'), fc.constant('visit:referrer'), fc.constant(['google'])),
);
const filtersArb = fc.oneof(
  fc.array(conditionArb, { minLength: 1, maxLength: 2 }),
  conditionArb.map((c) => [['not', c]]),
  fc.tuple(conditionArb, conditionArb).map(([a, b]) => [['or', [a, b]]]),
);

type Json = Record<string, unknown> & {
  current: Record<string, unknown>;
  rows: Array<Record<string, unknown> & { provider_payment_id?: string; unattributed?: boolean }>;
  points: unknown[];
  total: number | Record<string, number>;
  channels: Array<{ unattributed: boolean; customers: number; net_ltv_usd: number }>;
};

// Each run sessionizes, archives and writes the visit table of a new site: seconds per run, so the reliability suite's.
reliabilityOnly(
  'filtered reports through the local server equal a direct computation over the archive and the payments',
  () => {
    let svc: Awaited<ReturnType<typeof startTestService>>;
    let key: string;
    let n = 0;
    beforeAll(async () => {
      svc = await startTestService([], { app: true, sessionizeIntervalMs: 0 });
      key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'property', new Date())).key;
    }, 120_000);
    afterAll(async () => svc?.cleanup());

    it('for random sites and filters, and an always-true filter gives the unfiltered answers less Unattributed', async () => {
      console.log(`filtered reports property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
      await fc.assert(
        fc.asyncProperty(
          fc.array(eventArb, { minLength: 1, maxLength: 12 }),
          fc.array(paymentArb, { maxLength: 5 }),
          filtersArb,
          async (events, paid, filters) => {
            n += 1;
            const domain = `p${n}.test`;
            const config = new DynamoConfigStore(svc.dynamo);
            await config.addSite(siteOf({ domain, timezone: 'UTC' }));
            const site = (await config.getSite(domain))!;
            const lines = events.map((e) =>
              JSON.stringify({
                n: e.goal === null ? 'pageview' : 'goal',
                ...(e.goal === null ? {} : { g: e.goal }),
                ...(e.goal === OUTBOUND_GOAL && e.link !== null ? { l: e.link } : {}),
                u: `https://${domain}${e.page}`,
                ts: minuteOf(e.minute),
                v: e.visitor,
                ua: CHROME_UA,
                ...(e.ref === null ? {} : { r: e.ref }),
                ...(e.plan === null ? {} : { p: { plan: e.plan } }),
              }),
            );
            await importEventLines(svc.dynamo, localPaths(svc.dataDir).stream, lines, { site: domain });
            await svc.sessionize();
            const payments = dynamoPaymentDeps(svc.dynamo);
            const paymentLines = paid.map((p, i) =>
              JSON.stringify({
                provider: 'stripe',
                provider_payment_id: `pi_${i}`,
                ts: minuteOf(p.minute),
                amount: p.amount,
                currency: 'USD',
                refunded: p.refund === 'none' ? 0 : p.refund === 'part' ? Math.floor(p.amount / 2) : p.amount,
                status: p.refund === 'full' ? 'refunded' : 'paid',
                customer_id: `cus_${p.visitor}`,
                visitor_id: p.visitor,
                is_renewal: p.renewal,
                subscription_id: p.renewal ? `sub_${p.visitor}` : null,
              }),
            );
            await importPayments(
              payments,
              site,
              paymentLines.map((l, i) => parsePaymentLine(l, i + 1)),
            );
            await svc.archive();
            await svc.scheduled();

            // The direct computation: the archive's events sessionized in memory, the stored payments with their credit.
            const archived: TrackedEvent[] = [];
            const reader = new DuckDbArchiveReader(localPaths(svc.dataDir).archive);
            for await (const page of await reader.events(domain, '2026-02-01', '2026-03-13'))
              for (const e of page) archived.push(reclassify(e));
            const rows = visitRowsOfDays(archived, namespaceOf(site), 'UTC', '2026-02-08', TO);
            const rate = await payments.rates();
            const stored = await payments.payments.listPayments(namespaceOf(site));
            const listed = stored.flatMap((p) => {
              const r = paymentTableRow(p, 'UTC', rate);
              if (r === null) return [];
              const visit = rows.find((v) => v.visit_id === r.visit_id) ?? null;
              return [{ ...r, visit } satisfies CreditedPayment & { key: string; refunded: boolean }];
            });
            const input: FilteredInput = { rows, payments: listed };
            const filter = filtersParam.parse(JSON.stringify(filters)) as Filter;

            const get = async (path: string, f?: unknown): Promise<Json> => {
              const q = f === undefined ? '' : `&filters=${encodeURIComponent(JSON.stringify(f))}`;
              const res = await fetch(`${svc.url}/api/v1/sites/${domain}${path}${q}`, {
                headers: { authorization: `Bearer ${key}` },
              });
              const body = (await res.json()) as Json;
              expect([path, res.status]).toEqual([path, 200]);
              return body;
            };
            const range = `?from=${FROM}&to=${TO}`;
            const overview = await get(`/overview${range}`, filters);
            expect(overview.current).toEqual(filteredOverview(input, filter, RANGE));
            for (const dimension of ['channel', 'page', 'referrer', 'prop:plan'] as const) {
              const body = await get(`/breakdown/${encodeURIComponent(dimension)}${range}`, filters);
              const expected = filteredBreakdown(
                input,
                filter,
                RANGE,
                dimension === 'prop:plan' ? { prop: 'plan' } : dimension,
                100,
              );
              expect([dimension, body.total, body.rows]).toEqual([dimension, expected.total, expected.rows]);
            }
            const goals = await get(`/goals${range}`, filters);
            expect({ visitors: goals.visitors, total: goals.total, rows: goals.rows }).toEqual(
              filteredGoals(input, filter, RANGE, 100),
            );
            // The outbound links by URL: the links clicked in the matching visits.
            const outbound = `/goals${range}&goal=${encodeURIComponent(OUTBOUND_GOAL)}`;
            const links = await get(outbound, filters);
            expect({ visitors: links.visitors, total: links.total, rows: links.rows }).toEqual(
              filteredGoals(input, filter, RANGE, 100, OUTBOUND_GOAL),
            );
            const series = await get(`/timeseries${range}&interval=day`, filters);
            expect(series.points).toEqual(filteredTimeseries(input, filter, RANGE, 'day'));
            // The payments list: the range's payments credited to a matching visit, newest first, ties by key.
            const credited = listed
              .filter((p) => p.day >= FROM && p.day <= TO && p.visit !== null && matches(filter, p.visit))
              .sort((a, b) => b.ts - a.ts || (a.key < b.key ? 1 : -1));
            const list = await get(`/payments${range}&limit=200`, filters);
            expect([list.total, list.rows.map((r) => `stripe:${r.provider_payment_id}`)]).toEqual([
              credited.length,
              credited.map((p) => p.key),
            ]);
            // Retention: the payers whose first counted payment was credited to a matching visit, and their net.
            const first = new Map<string, (typeof listed)[number]>();
            for (const p of [...listed].sort((a, b) => a.ts - b.ts || (a.key < b.key ? -1 : 1)))
              if (!p.failed && !first.has(p.customer)) first.set(p.customer, p);
            const kept = new Set(
              [...first].filter(([, p]) => p.visit !== null && matches(filter, p.visit)).map(([c]) => c),
            );
            const net = listed.filter((p) => !p.failed && kept.has(p.customer)).reduce((s, p) => s + p.cents, 0);
            const retention = await get(`/retention${range}`, filters);
            expect(retention.total).toMatchObject({ customers: kept.size, net_ltv_usd: usd(net) });

            // An always-true filter: the unfiltered answers, less the Unattributed payments.
            const [plain, all, channels] = await Promise.all([
              get(`/overview${range}`),
              get(`/overview${range}`, EVERYTHING),
              get(`/breakdown/channel${range}`),
            ]);
            const unattributed = channels.rows.find((r) => r.unattributed) ?? { payments: 0, revenue_usd: 0 };
            const visitFields = [
              'visitors',
              'sessions',
              'pageviews',
              'bounce_rate',
              'views_per_visit',
              'visit_duration',
            ];
            for (const field of visitFields) expect([field, all.current[field]]).toEqual([field, plain.current[field]]);
            expect(all.current.payments).toBe(Number(plain.current.payments) - Number(unattributed.payments));
            expect(all.current.revenue_usd).toBe(
              usd(
                Math.round(Number(plain.current.revenue_usd) * 100) -
                  Math.round(Number(unattributed.revenue_usd) * 100),
              ),
            );
            // The outbound links under an always-true filter are the unfiltered rows (a link's payments are credited ones).
            const [plainLinks, allLinks] = await Promise.all([get(outbound), get(outbound, EVERYTHING)]);
            expect([allLinks.total, allLinks.rows]).toEqual([plainLinks.total, plainLinks.rows]);
            const [plainList, allList, plainU] = await Promise.all([
              get(`/payments${range}`),
              get(`/payments${range}`, EVERYTHING),
              get(`/payments${range}&filter=unattributed`),
            ]);
            expect(allList.total).toBe(Number(plainList.total) - Number(plainU.total));
            const [plainRetention, allRetention] = await Promise.all([
              get(`/retention${range}`),
              get(`/retention${range}`, EVERYTHING),
            ]);
            const lost = plainRetention.channels.find((g) => g.unattributed)?.customers ?? 0;
            expect((allRetention.total as Record<string, number>).customers).toBe(
              Number((plainRetention.total as Record<string, number>).customers) - lost,
            );
          },
        ),
        { seed, numRuns: 5 },
      );
    }, 900_000);
  },
);
