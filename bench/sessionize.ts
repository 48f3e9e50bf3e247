import { RollupDeltas } from '../lambdas/domain/rollup.js';
import { changeVisits, sessionizeBatch } from '../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { Visit } from '../lambdas/domain/visit.js';
import { createDynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { startMemoryDynalite } from '../local/dynalite.js';
import { dynamoPaymentDeps } from '../lambdas/adapters/dynamo/payment-deps.js';
import { parsePaymentLine } from '../lambdas/domain/payments/import-line.js';
import { applyProviderFacts, recreditVisitors } from '../lambdas/services/payments.js';
import { REFERRERS, rng, zipf } from '../local/demo/workload.js';
import type { Figure } from './report.js';

const SITE = 'shop.example';
const CHANNELS = ['Direct', 'Search', 'AI', 'Social', 'Communities', 'Email', 'Paid', 'Referral'];
const PATHS = ['/', '/pricing', '/docs', '/signup', ...Array.from({ length: 300 }, (_, i) => `/blog/post-${i}`)];

/**
 * A stream of events in arrival order: visitors come back over `days` days,
 * each visit 1–8 events a minute or two apart, about 5% of events late by up
 * to 20 minutes.
 */
export function* eventStream(total: number, days: number, seed = 7): Generator<TrackedEvent> {
  const random = rng(seed);
  const start = Date.UTC(2026, 0, 1);
  const span = days * 86_400_000;
  const visitors = Math.max(1, Math.floor(total / 12));
  let made = 0;
  let clock = start;
  const step = span / (total / 3.5);
  while (made < total) {
    clock += step * random() * 2;
    const visitor = `v${Math.floor(zipf(Array.from({ length: 1 }, () => random()), random) * visitors)}-${Math.floor(random() * visitors)}`;
    const events = 1 + Math.floor(random() * random() * 8);
    const channel = zipf(CHANNELS, random);
    let t = clock;
    for (let i = 0; i < events && made < total; i++, made++) {
      t += 20_000 + random() * 120_000;
      const late = random() < 0.05 ? random() * 1_200_000 : 0;
      yield {
        event_id: `e${made}`,
        site: SITE,
        ts: Math.round(t - late),
        type: random() < 0.1 ? 'goal' : 'pageview',
        goal: null,
        visitor_id: visitor,
        visitor_kind: 'id',
        hostname: SITE,
        path: zipf(PATHS, random),
        referrer_host: channel === 'Direct' ? null : new URL(zipf(REFERRERS.filter((r) => r.startsWith('http')), random)).hostname,
        channel,
        source: null,
        utm_source: null,
        utm_medium: null,
        utm_campaign: random() < 0.1 ? `c${Math.floor(random() * 20)}` : null,
        utm_term: null,
        utm_content: null,
        click_ids: null,
        link: null,
        country: zipf(['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP'], random),
        language: 'en',
        browser: zipf(['Chrome', 'Safari', 'Firefox', 'Edge'], random),
        browser_version: '120',
        os: zipf(['Windows', 'macOS', 'iOS', 'Android', 'Linux'], random),
        os_version: null,
        device: zipf(['Desktop', 'Mobile', 'Tablet'] as const, random),
        screen_width: 1280,
      };
    }
  }
}

export function* batches<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** Pure sessionization: grouping, visit merging and rollup deltas, with visits kept in memory. */
export function benchSessionizePure(total: number): Figure[] {
  const stored = new Map<string, Visit[]>();
  let peak = 0;
  let elapsed = 0n;
  let events = 0;
  for (const batch of batches(eventStream(total, 365), 1000)) {
    const t0 = process.hrtime.bigint();
    const byVisitor = new Map<string, TrackedEvent[]>();
    for (const e of batch) {
      const list = byVisitor.get(e.visitor_id);
      if (list) list.push(e);
      else byVisitor.set(e.visitor_id, [e]);
    }
    const deltas = new RollupDeltas();
    for (const [visitor, evs] of byVisitor) {
      const before = stored.get(visitor) ?? [];
      const min = evs.reduce((m, e) => Math.min(m, e.ts), Infinity) - 1_800_000;
      const around = before.filter((v) => v.end >= min);
      const change = changeVisits(SITE, visitor, around, evs);
      for (const v of change.before) deltas.addVisit(v, 'Europe/Berlin', -1);
      for (const v of change.after) deltas.addVisit(v, 'Europe/Berlin', 1);
      for (const e of evs) deltas.addActivity(SITE, visitor, e.ts, 'Europe/Berlin');
      // Keep the latest visit only: in-order traffic never reaches further back.
      const kept = [...before.filter((v) => !change.before.some((b) => b.id === v.id)), ...change.after].sort((a, b) => a.start - b.start);
      stored.set(visitor, kept.slice(-1));
    }
    deltas.list();
    elapsed += process.hrtime.bigint() - t0;
    events += batch.length;
    if (events % 100_000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const seconds = Number(elapsed) / 1e9;
  return [
    { section: 'sessionize', name: 'pure sessionization, events/s per core', value: events / seconds, unit: 'events/s', target: '≥ 500,000' },
    { section: 'sessionize', name: `peak RSS over ${(total / 1e6).toFixed(0)}M events`, value: peak / 2 ** 20, unit: 'MiB' },
  ];
}

/** An in-memory dynalite with the table and the bench site. */
async function benchTable() {
  const db = await startMemoryDynalite();
  const conn = createDynamoConnection({ table: 'bench', endpoint: db.endpoint });
  await ensureTable(conn);
  const config = new DynamoConfigStore(conn);
  await config.addAccount('bench', new Date());
  await config.addSite({ domain: SITE, timezone: 'Europe/Berlin', account: 'bench', attribution: 'last_non_direct', lookback_days: 30, rate_limit: 1000, created: new Date().toISOString() });
  return { db, conn, config };
}

/** End to end into dynalite: the real stores, batches of 1,000; requests per 1,000 events. */
async function benchDynalite(total: number): Promise<Figure[]> {
  const { db, conn, config } = await benchTable();
  const visits = new DynamoVisitStore(conn);
  const rollups = new DynamoRollupStore(conn);
  let seq = 0;
  const started = process.hrtime.bigint();
  // Two weeks of traffic: steady state, many visitors a day.
  for (const batch of batches(eventStream(total, 14, 11), 1000)) {
    seq++;
    await sessionizeBatch({ sites: config, visits, rollups }, { shard: 'shardId-0', sequence: String(seq) }, batch.map((e) => ({ sequenceNumber: String(seq), data: Buffer.from(JSON.stringify(e)) })));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const writes = rollups.calls.put + visits.calls.batchWrite;
  const reads = rollups.calls.batchGet + rollups.calls.get + visits.calls.query;
  conn.doc.destroy();
  await db.close();
  return [
    { section: 'sessionize', name: 'end to end into dynalite, events/s', value: total / seconds, unit: 'events/s' },
    { section: 'sessionize', name: 'DynamoDB write requests per 1,000 events', value: (writes / total) * 1000, unit: 'requests', target: '≤ 300' },
    { section: 'sessionize', name: 'DynamoDB read requests per 1,000 events', value: (reads / total) * 1000, unit: 'requests' },
  ];
}

/**
 * The sessionizer's re-credit step (issue 16.2) at its worst: every payment
 * arrives before its payer's visits (an import of payments, then the events),
 * one payer in 50 visitors, a purchase and two renewals each. DynamoDB
 * requests are counted at the SDK client (a middleware on the document
 * client), only while `recredit` runs.
 */
export async function benchRecredit(total: number, paymentsFirst: boolean): Promise<Figure[]> {
  const { db, conn, config } = await benchTable();
  const site = (await config.getSite(SITE))!;
  const events = [...eventStream(total, 14, 11)];
  const lastSeen = new Map<string, number>();
  for (const e of events) lastSeen.set(e.visitor_id, Math.max(lastSeen.get(e.visitor_id) ?? 0, e.ts));
  const payers = [...lastSeen.keys()].filter((_, i) => i % 50 === 0);
  const payments = dynamoPaymentDeps(conn);
  const lines: Array<{ at: number; line: string }> = [];
  for (const visitor of payers) {
    const ts = lastSeen.get(visitor) as number;
    for (const [k, at] of [ts, ts + 86_400_000, ts + 2 * 86_400_000].entries()) {
      lines.push({ at, line: JSON.stringify({ provider: 'stripe', provider_payment_id: `pi_${lines.length}`, ts: new Date(at).toISOString(), amount: 2900, currency: 'USD', customer_id: `cus_${visitor}`, visitor_id: visitor, is_renewal: k > 0 }) });
    }
  }
  lines.sort((a, b) => a.at - b.at);
  const n = lines.length;
  // Worst case: every payment before any visit (payments imported first). Otherwise each as its webhook would come, at its time.
  const settleUpTo = async (until: number) => {
    while (lines.length > 0 && (lines[0] as { at: number }).at <= until) await applyProviderFacts(payments, site, parsePaymentLine((lines.shift() as { line: string }).line, 1));
  };
  if (paymentsFirst) await settleUpTo(Infinity);
  let counting = false;
  const requests = { read: 0, write: 0 };
  const WRITES = new Set(['PutCommand', 'UpdateCommand', 'DeleteCommand', 'BatchWriteCommand', 'TransactWriteCommand', 'PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);
  conn.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (counting) requests[WRITES.has(String(context.commandName)) ? 'write' : 'read']++;
      return next(args);
    },
    { step: 'initialize', name: 'countRecreditRequests' },
  );
  const deps = {
    sites: config,
    visits: new DynamoVisitStore(conn),
    rollups: new DynamoRollupStore(conn),
    recredit: async (s: typeof site, visitors: readonly string[]) => {
      counting = true;
      try {
        return await recreditVisitors(payments, s, visitors);
      } finally {
        counting = false;
      }
    },
  };
  let seq = 0;
  let recredited = 0;
  for (const batch of batches(events, 1000)) {
    seq++;
    await settleUpTo(batch.reduce((m, e) => Math.min(m, e.ts), Infinity));
    recredited += (await sessionizeBatch(deps, { shard: 'shardId-0', sequence: String(seq) }, batch.map((e) => ({ sequenceNumber: String(seq), data: Buffer.from(JSON.stringify(e)) })))).recredited;
  }
  await settleUpTo(Infinity);
  const attributed = (await payments.payments.listPayments(SITE)).filter((p) => p.touch !== null).length;
  conn.doc.destroy();
  await db.close();
  const when = paymentsFirst ? '(every payment before its visits)' : '(payments at their time)';
  return [
    { section: 'sessionize', name: `re-credit ${when}: payments credited again (${n} payments of ${payers.length} payers; ${attributed} attributed at the end)`, value: recredited, unit: 'payments' },
    { section: 'sessionize', name: `re-credit ${when}: DynamoDB write requests per 1,000 events`, value: (requests.write / total) * 1000, unit: 'requests', target: '≤ 300 with the sessionizer' },
    { section: 'sessionize', name: `re-credit ${when}: DynamoDB read requests per 1,000 events`, value: (requests.read / total) * 1000, unit: 'requests' },
  ];
}

export async function benchSessionize(): Promise<Figure[]> {
  return [...benchSessionizePure(1_000_000), ...(await benchDynalite(50_000)), ...(await benchRecredit(10_000, false)), ...(await benchRecredit(10_000, true))];
}
