import { createHash } from 'node:crypto';
import { RollupDeltas } from '../lambdas/domain/rollup.js';
import { changeVisits, sessionizeBatch, type VisitorRecredit } from '../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { Visit } from '../lambdas/domain/visit.js';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createDynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import {
  CapacityMeter,
  difference,
  totalOf,
  type CapacityByOperation,
  type CapacityCounts,
} from '../lambdas/adapters/dynamo/capacity-meter.js';
import { DynamoBatchMarkers } from '../lambdas/adapters/dynamo/batch-marker-store.js';
import { CachedSiteDirectory } from '../lambdas/adapters/cached-site-directory.js';
import { createSessionizeHandler } from '../lambdas/handlers/sessionize.js';
import { ShardVisitCache } from '../lambdas/adapters/shard-visit-cache.js';
import { DynamoRecentPaymentMarks } from '../lambdas/adapters/dynamo/recent-payment-marks.js';
import { toKinesisEvent } from '../local/kinesis-event.js';
import { toSequenceNumber } from '../lambdas/adapters/local-stream.js';
import { trafficStream } from './traffic.js';
import { INGEST_BUFFER_INTERVAL } from '../lib/ingest.js';
import { ensureTable } from '../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { startMemoryDynalite } from '../local/dynalite.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import { parsePaymentLine } from '../lambdas/domain/payments/import-line.js';
import { applyProviderFacts, recreditVisitors } from '../lambdas/services/payments.js';
import type { Figure } from './report.js';
import { rollupBytesOfPeriod, tableBytesByType, visitFormsCompared, type BytesByType } from './storage.js';

const SITE = 'shop.example';
/**
 * Visitor ids of production's length: the tracker makes 22–44 base-36 digits (`tracker/src/v.ts`),
 * the daily hash is `h-` and 32 hex digits; this prefix and the traffic's visitor number make about
 * 31. Every item of a visitor's partition carries it in its key.
 */
const VISITOR_PREFIX = 'k7q2x9m4w1c8z5b3n6j2h4f0-';

/**
 * An event id as production gives one, a UUID (`randomEventId`, `lambdas/services/ingest.ts`),
 * derived from the traffic's own id so that runs repeat. Stored bytes depend on it: every event
 * of a visit keeps its id (36 characters, against the traffic's ~20).
 */
export function uuidOf(id: string): string {
  const h = createHash('sha256').update(id).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h.charAt(16), 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
const DAY = 86_400_000;
/** Where the pure and re-credit benches' traffic starts (their figures do not depend on the date). */
const YEAR_START = Date.UTC(2026, 0, 1);
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
  for (const batch of batches(
    trafficStream({ site: SITE, from: YEAR_START, to: YEAR_START + 365 * DAY, eventsPerMonth: total / 12, seed: 7 }),
    1000,
  )) {
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
      const kept = [...before.filter((v) => !change.before.some((b) => b.id === v.id)), ...change.after].sort(
        (a, b) => a.start - b.start,
      );
      stored.set(visitor, kept.slice(-1));
    }
    deltas.list();
    elapsed += process.hrtime.bigint() - t0;
    events += batch.length;
    if (events % 100_000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const seconds = Number(elapsed) / 1e9;
  return [
    {
      section: 'sessionize',
      name: 'pure sessionization, events/s per core',
      value: events / seconds,
      unit: 'events/s',
      target: '≥ 500,000',
    },
    {
      section: 'sessionize',
      name: `peak RSS over ${(total / 1e6).toFixed(0)}M events`,
      value: peak / 2 ** 20,
      unit: 'MiB',
    },
  ];
}

/** An in-memory dynalite with the table and the bench site; every request counted by `meter`. */
async function benchTable(meter = new CapacityMeter()) {
  const db = await startMemoryDynalite();
  const conn = createDynamoConnection({ table: 'bench', endpoint: db.endpoint, capacityMeter: meter });
  await ensureTable(conn);
  const config = new DynamoConfigStore(conn);
  await config.addAccount('bench', new Date());
  await config.addSite({
    domain: SITE,
    timezone: 'Europe/Berlin',
    account: 'bench',
    attribution: 'last_non_direct',
    lookback_days: 30,
    rate_limit: 1000,
    created: new Date().toISOString(),
  });
  meter.reset();
  return { db, conn, config, meter };
}

/**
 * Attributes a meter's counts to the step that made the requests: every method of a wrapped
 * dependency names its step (`visits.visitsAround`, …). The sessionizer's steps run one after the
 * other (parallel calls within a step are of that step), so the counts between two step changes
 * belong to the earlier step.
 */
class StepMeter {
  readonly bySteps: Record<string, CapacityCounts> = {};
  private current: string | null = null;
  private mark: CapacityByOperation = {};

  constructor(private readonly meter: CapacityMeter) {}

  enter(step: string): void {
    if (step === this.current) return;
    this.close();
    this.current = step;
    this.mark = this.meter.snapshot();
  }

  close(): void {
    if (this.current === null) return;
    const spent = totalOf(difference(this.meter.snapshot(), this.mark));
    const into = (this.bySteps[this.current] ??= {
      ...spent,
      ...Object.fromEntries(Object.keys(spent).map((k) => [k, 0])),
    } as CapacityCounts);
    for (const key of Object.keys(spent) as Array<keyof CapacityCounts>) into[key] += spent[key];
    this.current = null;
  }

  /** `target` with each method entering step `<name>.<method>` when called. */
  wrap<T extends object>(target: T, name: string): T {
    return new Proxy(target, {
      get: (obj, prop) => {
        const value = Reflect.get(obj, prop, obj) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          this.enter(`${name}.${String(prop)}`);
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      },
    });
  }
}

/** The step of payments arriving by webhook during the sessionize bench: not the sessionizer's cost. */
const WEBHOOKS = 'webhooks (not counted)';

/** Events a month at the traffic levels of `docs/cost.md`. */
export const TRAFFIC_LEVELS = [1_000_000, 10_000_000, 100_000_000] as const;
const MONTH_S = 30 * 86_400;
/** The scheduled function's interval (`lib/functions.ts`, `everyMinutes: 5`), which compacts the rollup delta log. */
const COMPACT_MS = 5 * 60_000;

/**
 * The sessionizer's steps as `docs/cost.md` splits its cost: each `StepMeter` step (`visits.visitsAround`,
 * `rollups.compact`, …) by the first rule whose pattern it matches. Rollups include the scheduled
 * compaction of their delta log; markers and config are the batch markers and the site lookup.
 */
export const STEP_GROUPS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^visits\./, 'visits'],
  [/^rollups\./, 'rollups'],
  [/^recredit/, 're-credit'],
  [/^(markers|sites)\./, 'markers and config'],
];

/** The group of a step (`STEP_GROUPS`), `other` when none matches. */
export function stepGroup(step: string): string {
  return STEP_GROUPS.find(([pattern]) => pattern.test(step))?.[1] ?? 'other';
}

/** Per-step figures summed by `stepGroup`. */
export function groupSteps(steps: SessionizeCost['steps']): SessionizeCost['steps'] {
  const out: SessionizeCost['steps'] = {};
  for (const [step, c] of Object.entries(steps)) {
    const into = (out[stepGroup(step)] ??= { wru: 0, rru: 0, requests: 0 });
    into.wru += c.wru;
    into.rru += c.rru;
    into.requests += c.requests;
  }
  return out;
}

/** What the sessionizer's DynamoDB requests cost per 1,000 events at one batch size. */
export interface SessionizeCost {
  batchSize: number;
  events: number;
  batches: number;
  /** Per 1,000 events. */
  wru: number;
  rru: number;
  requests: number;
  /** Per 1,000 events, by step (`sites.getSite`, `markers.put`, `visits.visitsAround`, `rollups.apply`, …). */
  steps: Record<string, { wru: number; rru: number; requests: number }>;
  /** The same, summed by `STEP_GROUPS`. */
  groups: Record<string, { wru: number; rru: number; requests: number }>;
  eventsPerSecond: number;
  /** Mean wall time of one batch through the handler on dynalite (ms): the processing part of the dashboards' lag. */
  msPerBatch: number;
}

/** What the table holds after a `sessionizeCost` run, read back with a Scan: every item type, and the events and payments that made them. */
export interface StoredAfterRun {
  events: number;
  payments: number;
  byType: BytesByType;
}

/**
 * The sessionizer's cost per 1,000 events at each batch size, counted at the SDK client
 * (`CapacityMeter`): the real Lambda handler (`createSessionizeHandler`: batch marker, cached site
 * lookup, visits, rollups, re-credit of the batch's visitors) on dynalite, one shard's traffic.
 *
 * The site gets `eventsPerMonth` of `trafficStream` (returning visitors, day rhythm) on one
 * shard. `warmupHours` before 10:00 (Berlin) of a Tuesday are sessionized in batches of 2,000 and
 * not counted, so the day's rollups and visits exist as they would (the month's rollups hold only
 * the warm-up: a layout whose write cost grows with item size would cost more late in a month);
 * then each batch size gets the next `measureEvents` events (about 9 minutes of traffic at 10M a
 * month for 2,000). A visitor who signs up pays 40% of the time, 10 minutes later
 * (through the payment service, not counted): so the re-credit step finds payments as in production.
 * The site lookup is cached 30 s of traffic time, as in a warm Lambda container. Event and
 * visitor ids have production's lengths (`uuidOf`, `VISITOR_PREFIX`): they are in every row and key.
 */
export async function sessionizeCost(options: {
  eventsPerMonth: number;
  batchSizes: readonly number[];
  measureEvents: number;
  warmupHours: number;
}): Promise<{ costs: SessionizeCost[]; stored: StoredAfterRun }> {
  const { db, conn, config, meter } = await benchTable();
  const site = (await config.getSite(SITE))!;
  const steps = new StepMeter(meter);
  let clock = 0;
  // Webhooks record their marker raises at traffic time, where the sessionizer's cache reads them.
  const payments = dynamoPaymentDeps(conn, () => clock);
  const rollups = steps.wrap(new DynamoRollupStore(conn), 'rollups');
  // One warm container takes every batch of the shard, as Lambda does for a steady stream.
  const visitCache = new ShardVisitCache(steps.wrap(new DynamoRecentPaymentMarks(conn), 'visits'), {
    clock: () => clock,
  });
  // The scheduled function folds the rollup delta log every 5 minutes (lib/functions.ts): its cost is the sessionizer's too.
  let compacted = 0;
  const handler = createSessionizeHandler({
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Bench' }),
    sites: new CachedSiteDirectory(steps.wrap(config, 'sites'), 30_000, () => clock),
    visits: steps.wrap(new DynamoVisitStore(conn), 'visits'),
    rollups,
    markers: steps.wrap(new DynamoBatchMarkers(conn), 'markers'),
    visitCache,
    recredit: (s, visitors) => {
      steps.enter('recredit');
      return recreditVisitors(payments, s, visitors);
    },
  });
  // Tuesday 2026-11-17: the warm-up ends at 10:00 in Berlin (09:00 UTC), near the day's peak.
  const warmEnd = Date.UTC(2026, 10, 17, 9);
  const from = warmEnd - options.warmupHours * 3_600_000;
  const hours = options.warmupHours + 12;
  const events = trafficStream({
    site: SITE,
    from,
    to: from + hours * 3_600_000,
    eventsPerMonth: options.eventsPerMonth,
    seed: 15,
    visitorPrefix: VISITOR_PREFIX,
  })[Symbol.iterator]();
  const due: Array<{ at: number; line: string }> = [];
  let sequence = 0;
  let paid = 0;
  let sessionized = 0;
  const take = (n: number, until = Infinity): TrackedEvent[] => {
    const out: TrackedEvent[] = [];
    while (out.length < n) {
      const next = events.next();
      if (next.done) break;
      const e = { ...next.value, event_id: uuidOf(next.value.event_id) };
      out.push(e);
      if (e.goal === 'Signup' && Number(/\d+$/.exec(e.visitor_id)?.[0] ?? 0) % 5 < 2) {
        due.push({
          at: e.ts + 600_000,
          line: JSON.stringify({
            provider: 'stripe',
            provider_payment_id: `pi_${++paid}`,
            ts: new Date(e.ts + 600_000).toISOString(),
            amount: 4900,
            currency: 'USD',
            customer_id: `cus_${e.visitor_id}`,
            visitor_id: e.visitor_id,
          }),
        });
      }
      if (e.ts >= until) break;
    }
    return out;
  };
  const settle = async (until: number) => {
    due.sort((a, b) => a.at - b.at);
    while (due.length > 0 && (due[0] as { at: number }).at <= until)
      await applyProviderFacts(payments, site, parsePaymentLine((due.shift() as { line: string }).line, 1));
  };
  const run = async (batch: TrackedEvent[]) => {
    if (batch.length === 0) return;
    clock = batch.reduce((max, e) => Math.max(max, e.ts), 0);
    if (Math.floor(clock / COMPACT_MS) > compacted) {
      compacted = Math.floor(clock / COMPACT_MS);
      await rollups.compact(SITE);
    }
    const records = batch.map((e) => ({
      sequenceNumber: toSequenceNumber(++sequence),
      partitionKey: `${e.site}#${e.visitor_id}`,
      approximateArrivalTimestamp: clock,
      data: Buffer.from(JSON.stringify(e)),
    }));
    const { batchItemFailures } = await handler(toKinesisEvent(records));
    if (batchItemFailures.length > 0) throw new Error('a bench batch failed');
    sessionized += batch.length;
  };
  // The warm-up, not counted.
  for (;;) {
    const batch = take(2_000, warmEnd);
    await settle(batch[0]?.ts ?? Infinity);
    await run(batch);
    if (batch.length === 0 || (batch[batch.length - 1] as TrackedEvent).ts >= warmEnd) break;
  }
  const results: SessionizeCost[] = [];
  for (const size of options.batchSizes) {
    const window = take(Math.ceil(options.measureEvents / size) * size);
    steps.close();
    const before = meter.snapshot();
    const stepsBefore = structuredClone(steps.bySteps);
    const started = process.hrtime.bigint();
    let count = 0;
    for (const batch of batches(window, size)) {
      // Payments come by webhook between batches; their requests are not the sessionizer's.
      steps.enter(WEBHOOKS);
      await settle(batch[0]?.ts ?? Infinity);
      steps.close();
      await run(batch);
      count++;
    }
    steps.close();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const webhooks = steps.bySteps[WEBHOOKS];
    const webhooksBefore = stepsBefore[WEBHOOKS];
    const all = totalOf(difference(meter.snapshot(), before));
    const spent = {
      ...all,
      wcu: all.wcu - (webhooks?.wcu ?? 0) + (webhooksBefore?.wcu ?? 0),
      rcu: all.rcu - (webhooks?.rcu ?? 0) + (webhooksBefore?.rcu ?? 0),
      requests: all.requests - (webhooks?.requests ?? 0) + (webhooksBefore?.requests ?? 0),
    };
    const per = (x: number) => (x / window.length) * 1000;
    const bySteps: SessionizeCost['steps'] = {};
    for (const [step, c] of Object.entries(steps.bySteps)) {
      const b = stepsBefore[step];
      const wru = c.wcu - (b?.wcu ?? 0);
      const rru = c.rcu - (b?.rcu ?? 0);
      const requests = c.requests - (b?.requests ?? 0);
      if (requests > 0 && step !== WEBHOOKS) bySteps[step] = { wru: per(wru), rru: per(rru), requests: per(requests) };
    }
    results.push({
      batchSize: size,
      events: window.length,
      batches: count,
      wru: per(spent.wcu),
      rru: per(spent.rcu),
      requests: per(spent.requests),
      steps: bySteps,
      groups: groupSteps(bySteps),
      eventsPerSecond: window.length / seconds,
      msPerBatch: (seconds * 1000) / count,
    });
  }
  const stored = { events: sessionized, payments: paid - due.length, byType: await tableBytesByType(conn) };
  conn.doc.destroy();
  await db.close();
  return { costs: results, stored };
}

/**
 * The batch the sessionizer gets at a traffic level: one raw object of the ingest delivery, the
 * events of one buffer interval (`INGEST_BUFFER_INTERVAL`, 60 s; an object is one batch whatever
 * its size, since a minute of 100M events a month is far under the 64 MiB buffer),
 * `docs/ingestion.md`. `windowSeconds` is another interval, the documented alternative.
 */
export function defaultBatch(eventsPerMonth: number, windowSeconds = INGEST_BUFFER_INTERVAL.toSeconds()): number {
  return Math.max(1, Math.round((eventsPerMonth / MONTH_S) * windowSeconds));
}

/**
 * A 300 s ingest buffer (Firehose takes up to 900 s, BufferingHints): the documented alternative
 * to the default 60 s, trading five minutes of dashboard delay for larger batches.
 */
export const LONGEST_WINDOW_S = 300;

/** Item types that are not kept per event: rollups (measured over a month apart), the realtime items (1 hour TTL), markers and configuration. */
const NOT_PER_EVENT = new Set([
  'ROLLUP',
  'ROLLUP_COUNTS',
  'ROLLUP_DELTA',
  'ROLLUP_LOG_STATE',
  'REALTIME',
  'BATCH_MARKER',
  'SITE',
  'ACCOUNT',
]);

/**
 * The sessionizer's cost table (`docs/benchmarks.md`): batch sizes 5, 20, 100 and 500 at 10M events a month on one shard,
 * then the default stack's batching (`defaultBatch`) at 1M, 10M and 100M events a month. Each
 * traffic level is warmed up with at most an hour or 10,000 events, whichever is less.
 */
export async function benchSessionizeCost(): Promise<Figure[]> {
  const env = process.env;
  const measureEvents = Number(env.FOOTFALL_BENCH_SESSIONIZE_EVENTS ?? 2_000);
  const warmup = (eventsPerMonth: number) =>
    Math.min(Number(env.FOOTFALL_BENCH_WARMUP_HOURS ?? 1), 10_000 / ((eventsPerMonth / MONTH_S) * 3600));
  const sizes = (env.FOOTFALL_BENCH_BATCH_SIZES ?? '500,100,20,5').split(',').map(Number);
  const figures: Figure[] = [];
  const add = (eventsPerMonth: number, c: SessionizeCost, role: string) => {
    const label = `${role}batch ${c.batchSize} (${(c.batchSize / (eventsPerMonth / MONTH_S)).toFixed(1)} s of traffic at ${eventsPerMonth / 1e6}M events/month)`;
    // Per step, then per group (`group:visits`, …): the shares docs/cost.md quotes.
    const detail = (key: 'wru' | 'rru' | 'requests') => ({
      ...Object.fromEntries(Object.entries(c.steps).map(([k, v]) => [k, v[key]])),
      ...Object.fromEntries(Object.entries(c.groups).map(([k, v]) => [`group:${k}`, v[key]])),
    });
    figures.push(
      {
        section: 'sessionize',
        name: `${label}: WRU per 1,000 events`,
        value: c.wru,
        unit: 'WRU',
        target: eventsPerMonth === 10_000_000 ? '≤ 500' : undefined,
        detail: detail('wru'),
      },
      {
        section: 'sessionize',
        name: `${label}: RRU per 1,000 events`,
        value: c.rru,
        unit: 'RRU',
        target: eventsPerMonth === 10_000_000 ? '≤ 500' : undefined,
        detail: detail('rru'),
      },
      {
        section: 'sessionize',
        name: `${label}: requests per 1,000 events`,
        value: c.requests,
        unit: 'requests',
        detail: detail('requests'),
      },
      { section: 'sessionize', name: `${label}: into dynalite`, value: c.eventsPerSecond, unit: 'events/s' },
      { section: 'sessionize', name: `${label}: ms per batch on dynalite`, value: c.msPerBatch, unit: 'ms' },
    );
  };
  const levels = env.FOOTFALL_BENCH_SESSIONIZE_RATE ? [Number(env.FOOTFALL_BENCH_SESSIONIZE_RATE)] : TRAFFIC_LEVELS;
  for (const eventsPerMonth of levels) {
    const chosen = defaultBatch(eventsPerMonth);
    const longest = defaultBatch(eventsPerMonth, LONGEST_WINDOW_S);
    const table = eventsPerMonth === 10_000_000 ? sizes : [];
    const batchSizes = [...new Set([...table, chosen, longest])].sort((x, y) => y - x);
    const { costs, stored } = await sessionizeCost({
      eventsPerMonth,
      batchSizes,
      measureEvents: Math.max(measureEvents, 2 * longest),
      warmupHours: warmup(eventsPerMonth),
    });
    for (const c of costs)
      add(
        eventsPerMonth,
        c,
        c.batchSize === chosen
          ? 'default stack, '
          : c.batchSize === longest && longest !== chosen
            ? `${LONGEST_WINDOW_S} s window, `
            : '',
      );
    figures.push(...storedFigures(eventsPerMonth, stored));
  }
  return figures;
}

/**
 * DynamoDB bytes stored per event at a traffic level (measured, not assumed), billed
 * storage with the 100-byte item overhead: the items a `sessionizeCost` run leaves per event
 * (visits, their chunks, payments and their list and counter items, read back with a Scan), and
 * the compacted rollup items of the same traffic (`rollupBytesOfPeriod` over about a million
 * events, at least a day: `FOOTFALL_BENCH_ROLLUP_DAYS`), scaled to 30 days and spread over the
 * month's events. Fewer days than 30 undercount the month items (a month holds more distinct
 * values than its first days); day and hour items scale exactly.
 */
function storedFigures(eventsPerMonth: number, stored: StoredAfterRun): Figure[] {
  const name = `stored at ${eventsPerMonth / 1e6}M events/month`;
  const perEvent: Record<string, number> = {};
  for (const [type, { bytes }] of Object.entries(stored.byType))
    if (!NOT_PER_EVENT.has(type)) perEvent[type] = bytes / stored.events;
  // About a million events of traffic, at least a day: 30 days at 1M a month, 3 at 10M, 1 at 100M.
  const days = Number(
    process.env.FOOTFALL_BENCH_ROLLUP_DAYS ?? Math.max(1, Math.round((30 * 1_000_000) / eventsPerMonth)),
  );
  const rollups = rollupBytesOfPeriod({
    site: SITE,
    timezone: 'Europe/Berlin',
    eventsPerMonth,
    from: Date.UTC(2026, 9, 1),
    days,
  });
  const monthly = Object.fromEntries(
    Object.entries(rollups.byMetric).map(([metric, { bytes }]) => [metric, (bytes * 30) / days]),
  );
  const rollupMonth = Object.values(monthly).reduce((a, b) => a + b, 0);
  const kept = Object.values(perEvent).reduce((a, b) => a + b, 0);
  return [
    {
      section: 'sessionize',
      name: `${name}: visits, chunks and payments per event (${stored.events} events, ${stored.payments} payments read back)`,
      value: kept,
      unit: 'B/event',
      detail: perEvent,
    },
    {
      section: 'sessionize',
      name: `${name}: rollup items per month (${days} days compacted${days < 30 ? ', scaled to 30' : ''})`,
      value: rollupMonth / 2 ** 20,
      unit: 'MiB',
      detail: Object.fromEntries(Object.entries(monthly).map(([k, v]) => [k, v / 2 ** 20])),
    },
    {
      section: 'sessionize',
      name: `${name}: all per event`,
      value: kept + rollupMonth / eventsPerMonth,
      unit: 'B/event',
      target: 'cost.md assumed 300',
    },
  ];
}

/** DynamoDB operations that write (counted apart from reads in the re-credit figures). */
const WRITE_OPERATIONS = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;
const fmt = (n: number) => n.toFixed(0);

/**
 * The sessionizer's re-credit step (`docs/payments.md` "Customers and attribution") at its worst: every payment
 * arrives before its payer's visits (an import of payments, then the events),
 * one payer in 50 visitors, a purchase and two renewals each. Requests and
 * capacity units are counted at the SDK client (`CapacityMeter`), only while
 * `recredit` runs. `batchSize` events per sessionizer batch: an import fills
 * batches (`footfall sessionize` reads 1,000, the AWS event source mapping up
 * to 2,000); live traffic at 10M events a month comes in `defaultBatch`'s 231.
 */
export async function benchRecredit(total: number, paymentsFirst: boolean, batchSize: number): Promise<Figure[]> {
  const { db, conn, config, meter } = await benchTable();
  const site = (await config.getSite(SITE))!;
  const events = [
    ...trafficStream({
      site: SITE,
      from: YEAR_START,
      to: YEAR_START + 14 * DAY,
      eventsPerMonth: (total * 30) / 14,
      seed: 11,
    }),
  ];
  const lastSeen = new Map<string, number>();
  for (const e of events) lastSeen.set(e.visitor_id, Math.max(lastSeen.get(e.visitor_id) ?? 0, e.ts));
  const payers = [...lastSeen.keys()].filter((_, i) => i % 50 === 0);
  const payments = dynamoPaymentDeps(conn);
  const lines: Array<{ at: number; line: string }> = [];
  for (const visitor of payers) {
    const ts = lastSeen.get(visitor) as number;
    for (const [k, at] of [ts, ts + 86_400_000, ts + 2 * 86_400_000].entries()) {
      lines.push({
        at,
        line: JSON.stringify({
          provider: 'stripe',
          provider_payment_id: `pi_${lines.length}`,
          ts: new Date(at).toISOString(),
          amount: 2900,
          currency: 'USD',
          customer_id: `cus_${visitor}`,
          visitor_id: visitor,
          is_renewal: k > 0,
        }),
      });
    }
  }
  lines.sort((a, b) => a.at - b.at);
  const n = lines.length;
  // Worst case: every payment before any visit (payments imported first). Otherwise each as its webhook would come, at its time.
  const settleUpTo = async (until: number) => {
    while (lines.length > 0 && (lines[0] as { at: number }).at <= until)
      await applyProviderFacts(payments, site, parsePaymentLine((lines.shift() as { line: string }).line, 1));
  };
  if (paymentsFirst) await settleUpTo(Infinity);
  const recreditSpent: CapacityCounts[] = [];
  const requestsOf = { write: 0, read: 0 };
  const deps = {
    sites: config,
    visits: new DynamoVisitStore(conn),
    rollups: new DynamoRollupStore(conn),
    recredit: async (s: typeof site, visitors: readonly VisitorRecredit[]) => {
      const { result, total, byOperation } = await meter.measure(() => recreditVisitors(payments, s, visitors));
      recreditSpent.push(total);
      for (const [operation, counts] of Object.entries(byOperation))
        requestsOf[WRITE_OPERATIONS.test(operation) ? 'write' : 'read'] += counts.requests;
      return result;
    },
  };
  let seq = 0;
  let recredited = 0;
  for (const batch of batches(events, batchSize)) {
    seq++;
    await settleUpTo(batch.reduce((m, e) => Math.min(m, e.ts), Infinity));
    recredited += (
      await sessionizeBatch(
        deps,
        { shard: 'shardId-0', sequence: String(seq) },
        batch.map((e) => ({ sequenceNumber: String(seq), data: Buffer.from(JSON.stringify(e)) })),
      )
    ).recredited;
  }
  await settleUpTo(Infinity);
  const attributed = (await payments.payments.listPayments(SITE)).filter((p) => p.touch !== null).length;
  conn.doc.destroy();
  await db.close();
  const spent = recreditSpent.reduce((sum, c) => totalOf({ a: sum, b: c }), totalOf({}));
  const when = `(${paymentsFirst ? 'every payment before its visits' : 'payments at their time'}, batch ${batchSize})`;
  return [
    {
      section: 'sessionize',
      name: `re-credit ${when}: payments credited again (${n} payments of ${payers.length} payers; ${attributed} attributed at the end)`,
      value: recredited,
      unit: 'payments',
    },
    {
      section: 'sessionize',
      name: `re-credit ${when}: WRU per 1,000 events`,
      value: (spent.wcu / total) * 1000,
      unit: 'WRU',
    },
    {
      section: 'sessionize',
      name: `re-credit ${when}: RRU per 1,000 events`,
      value: (spent.rcu / total) * 1000,
      unit: 'RRU',
    },
    {
      section: 'sessionize',
      name: `re-credit ${when}: DynamoDB requests per 1,000 events`,
      value: (spent.requests / total) * 1000,
      unit: 'requests',
    },
    {
      section: 'sessionize',
      name: `re-credit ${paymentsFirst ? 'worst case' : 'at their time'} (batch ${batchSize}): writes/reads/WRU per 1,000 events`,
      value: (requestsOf.write / total) * 1000,
      // The table shows one value per row: the writes, with the reads and WRU beside them (and in the JSON's detail).
      unit: `writes; ${fmt((requestsOf.read / total) * 1000)} reads; ${fmt((spent.wcu / total) * 1000)} WRU`,
      target: '≤ 300 writes',
      detail: {
        writes: (requestsOf.write / total) * 1000,
        reads: (requestsOf.read / total) * 1000,
        wru: (spent.wcu / total) * 1000,
      },
    },
  ];
}

/**
 * The VISIT item forms compared (`visitFormsCompared`): three hours of 10M-a-month traffic with
 * production's ids, bytes per event of form 0 and form 1 and form 1's CPU time per visit.
 */
export function benchVisitForms(): Figure[] {
  const c = visitFormsCompared({
    eventsPerMonth: 10_000_000,
    hours: 3,
    ids: { event: uuidOf, visitorPrefix: VISITOR_PREFIX },
  });
  const name = `VISIT items of ${c.visits} visits (${c.events} events, 10M/month traffic, UUID event ids)`;
  return [
    {
      section: 'sessionize',
      name: `${name}: form 0 (JSON rows, attributes by name), stored per event`,
      value: c.form0,
      unit: 'B/event',
    },
    {
      section: 'sessionize',
      name: `${name}: form 1 (compact rows, DEFLATE), stored per event`,
      value: c.form1,
      unit: 'B/event',
    },
    { section: 'sessionize', name: `${name}: form 1, building a visit's items`, value: c.writeUs, unit: 'µs/visit' },
    { section: 'sessionize', name: `${name}: form 1, reading a visit's items`, value: c.readUs, unit: 'µs/visit' },
  ];
}

export async function benchSessionize(): Promise<Figure[]> {
  const live = defaultBatch(10_000_000);
  return [
    ...benchSessionizePure(1_000_000),
    ...benchVisitForms(),
    ...(await benchSessionizeCost()),
    ...(await benchRecredit(10_000, false, live)),
    // The worst case is an import of events after their payments: full batches, and the live batch for comparison.
    ...(await benchRecredit(10_000, true, 1_000)),
    ...(await benchRecredit(10_000, true, live)),
  ];
}
