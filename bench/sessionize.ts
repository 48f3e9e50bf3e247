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
      const min = Math.min(...evs.map((e) => e.ts)) - 1_800_000;
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

/** End to end into dynalite: the real stores, batches of 1,000; requests per 1,000 events. */
async function benchDynalite(total: number): Promise<Figure[]> {
  const db = await startMemoryDynalite();
  const conn = createDynamoConnection({ table: 'bench', endpoint: db.endpoint });
  await ensureTable(conn);
  const config = new DynamoConfigStore(conn);
  await config.addAccount('bench', new Date());
  await config.addSite({ domain: SITE, timezone: 'Europe/Berlin', account: 'bench', attribution: 'last_non_direct', lookback_days: 30, rate_limit: 1000, created: new Date().toISOString() });
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

export async function benchSessionize(): Promise<Figure[]> {
  return [...benchSessionizePure(1_000_000), ...(await benchDynalite(50_000))];
}
