import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ArchiveCopies } from '../lambdas/adapters/archive-copies.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { SiteConfig } from '../lambdas/domain/site.js';
import type { ArchiveObjects, PaymentTableSource } from '../lambdas/ports.js';
import { refreshVisitTable, type VisitTableDeps } from '../lambdas/services/visit-table.js';
import { createArchiveConsumer } from '../local/archive.js';
import { LocalArchiveObjects } from '../local/archive-objects.js';
import { LocalVisitTable } from '../local/visit-table.js';
import { EVENTS_PER_VISIT, trafficStream } from './traffic.js';
import { benchSiteConfig } from './bench-site.js';
import { recordsOf } from '../test/archive/dataset.js';
import type { Figure } from './report.js';

const SITE = 'bench.example';
const SECTION = 'writer';
const WINDOW_MS = 15 * 60_000;
/** Noon UTC of the open day: the open days' span (`archiveSpan`) holds two closed days and half of this one. */
const NOW = Date.UTC(2026, 3, 10, 12);
const SPAN_START = Date.UTC(2026, 3, 8);

const site: SiteConfig = { ...benchSiteConfig('2026-01-01T00:00:00.000Z'), domain: SITE, timezone: 'UTC' };

/** No payments: the runs measured are the visits' (the payments' reads are priced per request, `docs/cost.md`). */
const noPayments: PaymentTableSource = {
  monthCounters: async () => new Map(),
  listedMonth: async () => [],
  listPayments: async () => [],
};

/** The archive's objects, counting the listings and gets a run makes. */
function counted(objects: ArchiveObjects) {
  const calls = { lists: 0, gets: 0 };
  const port: ArchiveObjects = {
    list: (...args) => (calls.lists++, objects.list(...args)),
    get: (key) => (calls.gets++, objects.get(key)),
  };
  return { port, calls };
}

/** CPU seconds (user and system, every thread of the process: DuckDB's too) and wall seconds of `work`. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; cpu: number; wall: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await work();
  const cpu = process.cpuUsage(cpu0);
  return { result, cpu: (cpu.user + cpu.system) / 1e6, wall: (performance.now() - t0) / 1000 };
}

/**
 * One site's open days at a traffic level: the events of `SPAN_START`..`NOW` (and a window past it)
 * from the bench's traffic model, written as one archive object per 15-minute window, as Firehose
 * delivers them. Then three writer runs, as the operations function makes them every 15 minutes on
 * one instance: a cold one (every object of the span copied), a busy warm one (one new object) and
 * an idle one (nothing new).
 */
async function measureLevel(label: string, eventsPerMonth: number): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ff-bench-writer-'));
  const archive = join(dir, 'archive');
  const consumer = createArchiveConsumer(archive, { onSkip: () => undefined });
  const windows = new Map<number, TrackedEvent[]>();
  let events = 0;
  for (const e of trafficStream({ site: SITE, from: SPAN_START, to: NOW + WINDOW_MS, eventsPerMonth, seed: 11 })) {
    const w = Math.floor(e.ts / WINDOW_MS);
    const batch = windows.get(w);
    if (batch) batch.push(e);
    else windows.set(w, [e]);
    if (e.ts < NOW) events++;
  }
  const deliver = async (w: number) => {
    const batch = windows.get(w) ?? [];
    if (batch.length === 0) return;
    await consumer(recordsOf(batch), `w${w}`);
  };
  for (const w of [...windows.keys()].sort()) if (w * WINDOW_MS < NOW) await deliver(w);
  const table = new LocalVisitTable(join(dir, 'table'));
  await table.setWrittenThrough(SITE, '2026-04-09');
  const { port, calls } = counted(new LocalArchiveObjects(archive));
  let now = NOW;
  const deps: VisitTableDeps = {
    archive: {
      events: () => Promise.reject(new Error('the open days are not read through the query engine')),
      firstDay: async () => '2026-04-08',
    },
    recent: new ArchiveCopies(port, join(dir, 'copies')),
    table,
    payments: noPayments,
    rates: async () => () => 1,
    clock: () => now,
  };
  const run = async (name: string) => {
    const before = { ...calls };
    const m = await measured(() => refreshVisitTable(deps, site));
    return [
      {
        section: SECTION,
        name: `${label}: ${name}, CPU`,
        value: m.cpu,
        unit: 's',
        detail: {
          wallSeconds: m.wall,
          openRows: m.result.open ?? -1,
          lists: calls.lists - before.lists,
          gets: calls.gets - before.gets,
        },
      },
      { section: SECTION, name: `${label}: ${name}, wall`, value: m.wall, unit: 's' },
      { section: SECTION, name: `${label}: ${name}, objects got`, value: calls.gets - before.gets, unit: 'GETs' },
    ];
  };
  try {
    const figures: Figure[] = [
      { section: SECTION, name: `${label}: events in the open days' span`, value: events, unit: 'events' },
    ];
    figures.push(...(await run('cold run (every object copied)')));
    await deliver(Math.floor(NOW / WINDOW_MS));
    now = NOW + WINDOW_MS;
    figures.push(...(await run('busy run (one new object)')));
    now = NOW + 2 * WINDOW_MS;
    figures.push(...(await run('idle run (nothing new)')));
    return figures;
  } finally {
    await consumer.close();
    await table.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- --only writer`: the visit table writer's open days read from the archive's
 * objects (`ArchiveCopies`, `docs/cost.md` "Filtered reports"), CPU seconds per run locally at the
 * bench site's 1M visits a month (about 33,000 a day) and at a small site's 10,000 events a month.
 * The CPU seconds are what one vCPU (1,769 MB) spends in AWS; S3's requests add their round trips.
 */
export async function benchVisitTableWriter(): Promise<Figure[]> {
  return [
    ...(await measureLevel('1M visits a month', 1_000_000 * EVENTS_PER_VISIT)),
    ...(await measureLevel('10k events a month', 10_000)),
  ];
}
