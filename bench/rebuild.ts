import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalEventStream } from '../lambdas/adapters/local-stream.js';
import { CapacityMeter, attachCapacityMeter } from '../lambdas/adapters/dynamo/capacity-meter.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import { applyProviderFacts } from '../lambdas/services/payments.js';
import { rebuildSite, type RebuildPhase } from '../lambdas/services/rebuild.js';
import { namespaceOf, type SiteConfig } from '../lambdas/domain/site.js';
import { DuckDbArchiveReader } from '../local/archive-reader.js';
import { localPaths, startLocalService } from '../local/service.js';
import { trafficStream } from './traffic.js';
import type { Figure } from './report.js';

const DAY = 86_400_000;
export const SITE = 'bench.example';

/**
 * A local stack on a fresh data directory (on-disk dynalite, as the CLI
 * uses), no timers, with the bench site (`bench.example`, UTC, last
 * non-direct over 30 days) in account `bench`. Dynalite runs in a thread of
 * its own unless `options.dynaliteThread` is false (as `startLocalService`).
 */
export async function startBenchService(prefix: string, options: { dynaliteThread?: boolean } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const service = await startLocalService({
    dataDir,
    port: 0,
    app: false,
    sessionizeIntervalMs: 0,
    dynaliteThread: options.dynaliteThread,
  });
  const config = new DynamoConfigStore(service.dynamo);
  await config.addAccount('bench', new Date());
  await config.addSite({
    domain: SITE,
    timezone: 'UTC',
    account: 'bench',
    attribution: 'last_non_direct',
    lookback_days: 30,
    rate_limit: 1_000_000,
    created: new Date().toISOString(),
  });
  return { dataDir, service, config };
}

/**
 * `npm run bench -- --only rebuild`: what `footfall rebuild` costs on a local
 * stack (`docs/rebuild.md`): a site with `FOOTFALL_BENCH_REBUILD_EVENTS`
 * events (default 50,000) of the bench's traffic model over 30 days and one
 * payment per 100 events, sessionized and archived as the stream would, then
 * rebuilt into generation 1 and switched. Requests and capacity units are
 * counted at the SDK client (the capacity middleware, attached once the site
 * is loaded and the service idle), per phase; time per phase on this machine (DuckDB reads the
 * archive, dynalite stands in for DynamoDB, so the ms say little about AWS;
 * the WRU/RRU per event do).
 */
export async function benchRebuild(
  events = Number(process.env.FOOTFALL_BENCH_REBUILD_EVENTS ?? 50_000),
): Promise<Figure[]> {
  const { dataDir, service, config } = await startBenchService('ff-bench-rebuild-');
  try {
    const to = Date.now() - DAY;
    const stream = await LocalEventStream.open(localPaths(dataDir).stream);
    let n = 0;
    const visitors: string[] = [];
    let batch = [];
    for (const event of trafficStream({ site: SITE, from: to - 30 * DAY, to, eventsPerMonth: events, seed: 7 })) {
      batch.push(event);
      if (++n % 100 === 0) visitors.push(event.visitor_id);
      if (batch.length >= 5000) {
        await stream.put(batch);
        batch = [];
      }
    }
    await stream.put(batch);
    await stream.close();
    await service.sessionize();
    await service.archive();
    const site = (await config.getSite(SITE)) as SiteConfig;
    const payments = dynamoPaymentDeps(service.dynamo);
    for (const [i, visitor] of visitors.entries()) {
      const fact = {
        provider: 'stripe' as const,
        id: `pi_${i}`,
        aliases: [],
        ts: to - 29 * DAY + i * ((29 * DAY) / visitors.length),
        amount: 2900,
        currency: 'USD',
        status: 'paid' as const,
        visitor_id: visitor,
        customer_id: `cus_${i % 300}`,
        is_renewal: i >= 300,
      };
      await applyProviderFacts(payments, site, {
        event_id: 'bench',
        event_type: 'bench',
        payments: [fact],
        subscriptions: [],
        customers: [],
      });
    }

    // From here on the service is idle (no timers: interval 0): what the client counts is the rebuild's.
    const meter = new CapacityMeter();
    attachCapacityMeter(service.dynamo.doc.middlewareStack, meter);
    const conn = service.dynamo;
    const phases = new Map<RebuildPhase, { ms: number; rcu: number; wcu: number; requests: number }>();
    let current: { phase: RebuildPhase; since: number; at: ReturnType<CapacityMeter['total']> } | null = null;
    const close = () => {
      if (!current) return;
      const now = meter.total();
      const entry = phases.get(current.phase) ?? { ms: 0, rcu: 0, wcu: 0, requests: 0 };
      phases.set(current.phase, {
        ms: entry.ms + performance.now() - current.since,
        rcu: entry.rcu + now.rcu - current.at.rcu,
        wcu: entry.wcu + now.wcu - current.at.wcu,
        requests: entry.requests + now.requests - current.at.requests,
      });
    };
    const started = performance.now();
    const outcome = await rebuildSite(
      {
        archive: new DuckDbArchiveReader(localPaths(dataDir).archive),
        sites: new DynamoConfigStore(conn),
        store: new DynamoRebuildStore(conn),
        visits: new DynamoVisitStore(conn),
        rollups: new DynamoRollupStore(conn),
        payments: dynamoPaymentDeps(conn),
        fence: async () => undefined,
        drain: async () => undefined,
        clock: Date.now,
        onProgress: (p) => {
          if (current?.phase === p.phase) return;
          close();
          current = { phase: p.phase, since: performance.now(), at: meter.total() };
        },
      },
      SITE,
      { firstTrackedDay: await new DynamoRebuildStore(conn).firstVisitDay(namespaceOf(site)) },
    );
    close();
    const totalMs = performance.now() - started;
    const total = meter.total();
    const per1000 = (x: number) => (x * 1000) / outcome.events;
    const figures: Figure[] = [
      {
        section: 'rebuild',
        name: `events rebuilt (${outcome.payments} payments)`,
        value: outcome.events,
        unit: 'events',
      },
      { section: 'rebuild', name: 'wall time, whole rebuild', value: totalMs, unit: 'ms' },
      {
        section: 'rebuild',
        name: 'rate, sessionizing',
        value: (outcome.events * 1000) / (phases.get('sessionizing')?.ms ?? totalMs),
        unit: 'events/s',
      },
      {
        section: 'rebuild',
        name: 'WRU per 1,000 events (whole rebuild)',
        value: per1000(total.wcu),
        unit: 'WRU',
        detail: Object.fromEntries([...phases].map(([p, c]) => [p, per1000(c.wcu)])),
      },
      {
        section: 'rebuild',
        name: 'RRU per 1,000 events (whole rebuild)',
        value: per1000(total.rcu),
        unit: 'RRU',
        detail: Object.fromEntries([...phases].map(([p, c]) => [p, per1000(c.rcu)])),
      },
      { section: 'rebuild', name: 'requests per 1,000 events', value: per1000(total.requests), unit: 'requests' },
      { section: 'rebuild', name: 'items of the old generation deleted', value: outcome.deleted, unit: 'items' },
    ];
    for (const [phase, c] of phases)
      figures.push({
        section: 'rebuild',
        name: `phase ${phase}: time / WRU / RRU`,
        value: c.ms,
        unit: 'ms',
        detail: { wru: c.wcu, rru: c.rcu, requests: c.requests },
      });
    return figures;
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
