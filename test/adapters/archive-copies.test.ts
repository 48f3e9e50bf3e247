import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArchiveCopies } from '../../lambdas/adapters/archive-copies.js';
import { S3ArchiveObjects } from '../../lambdas/adapters/s3-archive-objects.js';
import { S3TableFiles, TABLE_FAMILIES } from '../../lambdas/adapters/s3-table-files.js';
import { S3VisitTable } from '../../lambdas/adapters/s3-visit-table.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PaymentRecords } from '../../lambdas/adapters/dynamo/payments/payment-store-records.js';
import { PaymentTableReads } from '../../lambdas/adapters/dynamo/payments/payment-table-reads.js';
import { EVENTS_PREFIX } from '../../lambdas/domain/archive-schema.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { visitRowsOfDays } from '../../lambdas/domain/visit-days.js';
import { namespaceOf } from '../../lambdas/domain/site.js';
import type { VisitRow } from '../../lambdas/domain/visit-table.js';
import type { ArchiveObjects, RecentArchive } from '../../lambdas/ports.js';
import { refreshSiteTable, refreshVisitTable, type VisitTableDeps } from '../../lambdas/services/visit-table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoLookStore } from '../../lambdas/adapters/dynamo/look-store.js';
import {
  OPERATIONS_EVERY_MS,
  refreshAskedFor,
  refreshVisitTables,
  type OperationsVisitTable,
} from '../../lambdas/services/operations.js';
import { TableLooks } from '../../lambdas/services/table-looks.js';
import { createTelemetry } from '../../lambdas/observability/telemetry.js';
import { functionConnection } from '../../local/iam/partition-guard.js';
import { createArchiveConsumer } from '../../local/archive.js';
import { LocalArchiveObjects } from '../../local/archive-objects.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { functionArchiveObjects } from '../../local/iam/stand-ins.js';
import { memoryTable } from '../support/dynamo.js';
import { site as siteOf, trackedEvent } from '../support/events.js';
import { propertyRuns } from '../support/suite.js';
import { memoryBucket, type MemoryBucket } from '../support/memory-bucket.js';
import { recordsOf } from '../archive/dataset.js';

/**
 * The visit table's writer reading the open days from the archive's objects (`ArchiveCopies` over
 * `S3ArchiveObjects`, `docs/data-model.md` "Filtered reports"), against an in-memory bucket behind
 * aws-sdk-client-mock holding Parquet objects the local archive writer wrote: an idle run reads and
 * writes nothing, a new object is read once, a duplicate is counted once, and the events equal the
 * local archive reader's (the stand-in for Athena) over the same objects.
 */

const BUCKET = 'footfall-events';
const SITE = 'shop.test';
const site = siteOf({ domain: SITE, timezone: 'UTC' });
const MIN = 60_000;
/** Noon of the open day: the last closed day is the day before. */
const NOW = Date.UTC(2026, 3, 10, 12);
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

let bucket: MemoryBucket;
const s3 = mockClient(S3Client);
afterAll(() => s3.restore());

/** The in-memory bucket, 2 keys a listing page. */
function mockBucket(): void {
  bucket = memoryBucket(s3, 2, () => now);
}

let dir: string;
let archive: string;
let now = NOW;
let objectsWritten = 0;

/**
 * Writes `events` as one archive object per partition day (the local archive writer's Parquet, as
 * Firehose delivers a batch), and puts each into the bucket under the events prefix.
 * @returns the keys put, relative to the prefix
 */
async function deliver(events: readonly TrackedEvent[]): Promise<string[]> {
  const consumer = createArchiveConsumer(archive, { onSkip: (s) => expect.fail(s.reason) });
  const name = `batch-${++objectsWritten}`;
  await consumer(recordsOf(events), name);
  await consumer.close();
  const keys: string[] = [];
  for (const file of await readdir(archive, { recursive: true })) {
    const key = file.split(sep).join('/');
    if (!key.endsWith(`part-${name}.parquet`)) continue;
    bucket.store(`${EVENTS_PREFIX}${key}`, new Uint8Array(await readFile(join(archive, file))));
    keys.push(key);
  }
  return keys;
}

/** A page view of the site at `ts`. */
const view = (visitor: string, ts: number, id: string, path = '/') =>
  trackedEvent({ site: SITE, hostname: SITE, visitor_id: visitor, ts, event_id: id, path });

/** The archive's objects in the in-memory bucket. */
const bucketObjects = () => new S3ArchiveObjects(new S3Client({}), { bucket: BUCKET, prefix: EVENTS_PREFIX });

/** The archive's recent partitions over the bucket, counting how often a snapshot's events were read (a sessionization). */
function recentOverBucket(): { recent: RecentArchive; sessionized: () => number } {
  const copies = new ArchiveCopies(bucketObjects(), join(dir, 'copies'));
  let reads = 0;
  return {
    recent: {
      snapshot: async (s, fromDt, toDt) => {
        const snapshot = await copies.snapshot(s, fromDt, toDt);
        return {
          ...snapshot,
          events: () => {
            reads++;
            return snapshot.events();
          },
        };
      },
    },
    sessionized: () => reads,
  };
}

/** Every event of `pages`, in order. */
async function collect(pages: AsyncIterable<TrackedEvent[]>): Promise<TrackedEvent[]> {
  const out: TrackedEvent[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}

/** The events of a snapshot of the open days' span (`2026-04-08`..`2026-04-12`) of site `s`. */
const spanEvents = async (recent: RecentArchive, s = SITE) =>
  collect(await (await recent.snapshot(s, '2026-04-08', '2026-04-12')).events());

const archiveKeys = (calls: ReturnType<typeof s3.commandCalls>) =>
  calls.map((c) => String((c.args[0].input as { Key: string }).Key)).filter((k) => k.startsWith(EVENTS_PREFIX));

describe('the open days read from the archive objects (ArchiveCopies over S3)', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let table: S3VisitTable;

  beforeEach(async () => {
    mockBucket();
    dir = await mkdtemp(join(tmpdir(), 'archive-copies-'));
    archive = join(dir, 'archive');
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: 'UTC' }]));
    table = new S3VisitTable(
      new S3TableFiles(
        new S3Client({}),
        { bucket: BUCKET, families: TABLE_FAMILIES.write, listTtlMs: 60_000, limitBytes: 1e9, clock: () => now },
        join(dir, 'table'),
      ),
    );
  });
  afterEach(async () => {
    await table.close();
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  const deps = (recent: RecentArchive): VisitTableDeps => ({
    archive: new DuckDbArchiveReader(archive),
    recent,
    table,
    payments: new PaymentTableReads(conn, new PaymentRecords(conn)),
    rates: async () => () => 1,
    clock: () => now,
  });
  const openRows = async (): Promise<VisitRow[]> =>
    visitRowsOfDays(await spanEvents(recentOverBucket().recent), namespaceOf(site), 'UTC', '2026-04-10', '2026-04-10');

  it('a run with nothing new gets and puts no object and sessionizes nothing; a new object is got once and its visit appears', async () => {
    now = NOW;
    await deliver([view('visitor-a1', NOW - 60 * MIN, 'a-1'), view('visitor-a1', NOW - 50 * MIN, 'a-2', '/pricing')]);
    const { recent, sessionized } = recentOverBucket();
    const first = await refreshVisitTable(deps(recent), site);
    expect(first.open).toBe(1);
    expect(sessionized()).toBe(2); // the day that closed (its own snapshot) and the open days

    for (const minutes of [15, 30]) {
      s3.resetHistory();
      now = NOW + minutes * MIN;
      const idle = await refreshVisitTable(deps(recent), site);
      expect(idle.open).toBeNull();
      expect(sessionized()).toBe(2);
      expect(s3.commandCalls(GetObjectCommand)).toEqual([]);
      expect(s3.commandCalls(PutObjectCommand)).toEqual([]);
      // The open days' listing and the table's four families, nothing else.
      expect(s3.commandCalls(ListObjectsV2Command).length).toBeLessThanOrEqual(1 + TABLE_FAMILIES.write.length);
    }

    s3.resetHistory();
    now = NOW + 45 * MIN;
    const [added] = await deliver([view('visitor-b1', NOW + 40 * MIN, 'b-1', '/blog')]);
    const fresh = await refreshVisitTable(deps(recent), site);
    // A busy run's requests (priced in docs/cost.md): five listings, the new object's GET, and its puts: the open
    // file, the writer's state and, as the new visit brought new values, the dictionary.
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1 + TABLE_FAMILIES.write.length);
    expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key)).toEqual([
      `visit-table/dict/site=${SITE}/dict.parquet`,
      `visit-table/visits/site=${SITE}/open/data.parquet`,
      `visit-table/state/site=${SITE}/payments.json`,
    ]);
    expect(fresh.open).toBe(2);
    expect(sessionized()).toBe(3);
    expect(archiveKeys(s3.commandCalls(GetObjectCommand))).toEqual([`${EVENTS_PREFIX}${added}`]);
    const rows = await openRows();
    expect(rows.map((r) => [r.visitor_id, r.pageviews, r.landing_page]).sort()).toEqual([
      ['visitor-a1', 2, '/'],
      ['visitor-b1', 1, '/blog'],
    ]);

    // The run after is idle again: the new object was got once.
    s3.resetHistory();
    now = NOW + 60 * MIN;
    expect((await refreshVisitTable(deps(recent), site)).open).toBeNull();
    expect(s3.commandCalls(GetObjectCommand)).toEqual([]);

    // After a rebuild switched generations the table is written whole (`refreshSiteTable`), the open days
    // included, though no object came.
    expect((await refreshSiteTable(deps(recent), { ...site, generation: 1 })).open).toBe(2);
    expect(sessionized()).toBe(5); // the day closed and the open days, written again
  });

  /** The operations run's visit tables refreshed on demand, the looks under the operations function's policy. */
  const onDemand = (recent: RecentArchive): OperationsVisitTable => ({
    ...deps(recent),
    sites: new DynamoConfigStore(functionConnection(conn, 'operations')),
    logger: createTelemetry('test').logger,
    onDemand: { looks: new DynamoLookStore(functionConnection(conn, 'operations')), runEveryMs: OPERATIONS_EVERY_MS },
  });
  /** Every S3 request the mock received since its last reset. */
  const s3Requests = () => s3.calls().length;

  it('on demand: a site nobody looks at is refreshed once a day and not between; a look brings the next run, for an hour', async () => {
    // The report function's looks, under its policy; the refresh it asks for is recorded, not run.
    const asked: string[] = [];
    const looks = new TableLooks({
      marks: new DynamoLookStore(functionConnection(conn, 'report')),
      refresh: async (domain) => void asked.push(domain),
      clock: () => now,
      logger: console,
    });
    const { recent } = recentOverBucket();
    const run = async (at: number) => {
      now = at;
      s3.resetHistory();
      const { refreshed } = await refreshVisitTables(onDemand(recent), new Set());
      return { refreshed, requests: s3Requests() };
    };
    await deliver([view('visitor-e1', NOW - 60 * MIN, 'e-1')]);
    // Noon and the runs after: no site-local day closed since the run before, nobody looked: no request to S3 at all.
    for (const minutes of [0, 15, 30, 6 * 60])
      expect(await run(NOW + minutes * MIN)).toEqual({ refreshed: 0, requests: 0 });

    // The first run after the day closed (55 minutes after midnight, `CLOSE_DELAY_MS`) writes it; the next does nothing.
    const closing = Date.UTC(2026, 3, 11, 1, 0);
    const daily = await run(closing);
    expect(daily.refreshed).toBe(1);
    expect(daily.requests).toBeGreaterThan(0);
    expect(await table.writtenThrough(SITE)).toBe('2026-04-10');
    expect(await run(closing + 15 * MIN)).toEqual({ refreshed: 0, requests: 0 });

    // A look at an idle site asks for a refresh now, and the next run refreshes it, waited for first.
    now = closing + 20 * MIN;
    await looks.seen(SITE);
    expect(asked).toEqual([SITE]);
    await deliver([view('visitor-e2', now, 'e-2', '/new')]);
    const looked = await run(closing + 30 * MIN);
    expect(looked.refreshed).toBe(1);
    expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key)).toContain(
      `visit-table/visits/site=${SITE}/open/data.parquet`,
    );
    // The refresh it asked for is done: a filtered request does not wait.
    await looks.fresh(SITE);
    // Refreshed at every run within the hour after the look, then no more.
    expect((await run(closing + 75 * MIN)).refreshed).toBe(1);
    expect(await run(closing + 90 * MIN)).toEqual({ refreshed: 0, requests: 0 });
    expect(asked).toEqual([SITE]);
  });

  it('on demand: the refresh a look asks for (an invocation of the operations function) refreshes the site once', async () => {
    const table = onDemand(recentOverBucket().recent);
    const looks = new TableLooks({
      marks: new DynamoLookStore(functionConnection(conn, 'report')),
      refresh: async (domain) => void (await refreshAskedFor(table, domain)),
      logger: console,
      clock: () => now,
    });
    await deliver([view('visitor-f1', NOW - 10 * MIN, 'f-1')]);
    now = NOW;
    s3.resetHistory();
    await looks.seen(SITE);
    expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.Key)).toContain(
      `visit-table/visits/site=${SITE}/open/data.parquet`,
    );
    await looks.fresh(SITE);
    // Asked again (a queued invocation run late): the run before answered it, so it reads nothing.
    s3.resetHistory();
    expect((await refreshAskedFor(table, SITE)).refreshed).toBe(0);
    expect(s3Requests()).toBe(0);
  });

  it('an event delivered twice, in two objects, is counted once', async () => {
    now = NOW;
    const twice = view('visitor-c1', NOW - 30 * MIN, 'c-1', '/docs');
    await deliver([twice, view('visitor-c1', NOW - 20 * MIN, 'c-2')]);
    await deliver([twice]);
    const { recent } = recentOverBucket();
    expect((await refreshVisitTable(deps(recent), site)).open).toBe(1);
    const [row] = await openRows();
    expect(row).toMatchObject({ visitor_id: 'visitor-c1', pageviews: 2, landing_page: '/docs' });
  });

  it('makes the same listing and reads as the local twin over the same files, under the operations policy', async () => {
    await deliver([view('visitor-d1', NOW - 10 * MIN, 'd-1')]);
    await deliver([view('visitor-d2', NOW - 5 * MIN, 'd-2'), view('visitor-d2', NOW - 86_400_000, 'd-3')]);
    const calls: string[] = [];
    const local = new LocalArchiveObjects(archive);
    const counted: ArchiveObjects = {
      list: async (...args) => {
        calls.push(`list ${args.join(' ')}`);
        return local.list(...args);
      },
      get: async (key) => {
        calls.push(`get ${key}`);
        return local.get(key);
      },
    };
    const twin = new ArchiveCopies(functionArchiveObjects(counted, 'operations'), join(dir, 'twin'));
    const aws = new ArchiveCopies(bucketObjects(), join(dir, 'aws'));
    s3.resetHistory();
    const [fromTwin, fromAws] = [await spanEvents(twin), await spanEvents(aws)];
    expect(fromTwin).toEqual(fromAws);
    expect(fromAws.map((e) => e.event_id).sort()).toEqual(['d-1', 'd-2', 'd-3']);
    // One listing each (the mock's pages hold 2 keys), then a get of each listed object, in the same order.
    const gets = archiveKeys(s3.commandCalls(GetObjectCommand)).map((k) => `get ${k.slice(EVENTS_PREFIX.length)}`);
    expect(gets.length).toBe(3);
    expect(calls).toEqual([`list ${SITE} 2026-04-08 2026-04-12`, ...gets]);
    // The paginator reuses its input object: each request's Prefix and StartAfter are what it was sent with.
    const listings = s3.commandCalls(ListObjectsV2Command).map((c) => c.args[0].input);
    expect(listings.length).toBe(2); // 3 keys, 2 a page: one listing
    for (const l of listings)
      expect(l).toMatchObject({
        Prefix: `${EVENTS_PREFIX}site=${SITE}/`,
        StartAfter: `${EVENTS_PREFIX}site=${SITE}/dt=2026-04-08`,
      });
    // A function without the grant is refused locally, as in AWS.
    const report = new ArchiveCopies(functionArchiveObjects(local, 'report'), join(dir, 'report'));
    await expect(report.snapshot(SITE, '2026-04-08', '2026-04-12')).rejects.toThrow(/s3:ListBucket/);
  });
});

/** A fresh bucket and temp directory (`dir`, with `archive` in it) for each test of the block. */
function freshArchive(prefix: string): void {
  beforeEach(async () => {
    mockBucket();
    dir = await mkdtemp(join(tmpdir(), prefix));
    archive = join(dir, 'archive');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));
}

describe('what an instance keeps between runs (ArchiveCopiesLimits)', () => {
  freshArchive('archive-copies-lru-');

  const OTHER = 'other.test';

  it('keeps every site within its limits, and drops the least recently used site whole past them', async () => {
    await deliver([view('visitor-e1', NOW - 10 * MIN, 'e-1'), view('visitor-e1', NOW - 9 * MIN, 'e-2')]);
    await deliver([trackedEvent({ site: OTHER, hostname: OTHER, visitor_id: 'visitor-f1', ts: NOW, event_id: 'f-1' })]);
    const roomy = new ArchiveCopies(bucketObjects(), join(dir, 'roomy'), { events: 10, bytes: 1e9 });
    const tight = new ArchiveCopies(bucketObjects(), join(dir, 'tight'), { events: 2, bytes: 1e9 });
    for (const copies of [roomy, tight]) {
      expect((await spanEvents(copies, SITE)).map((e) => e.event_id)).toEqual(['e-1', 'e-2']);
      expect((await spanEvents(copies, OTHER)).map((e) => e.event_id)).toEqual(['f-1']);
    }
    s3.resetHistory();
    expect((await spanEvents(roomy)).length).toBe(2);
    expect(s3.commandCalls(GetObjectCommand)).toEqual([]);
    // Three events held were over the tight limit of two: the site used least recently went, and is got again.
    expect((await spanEvents(tight)).length).toBe(2);
    expect(archiveKeys(s3.commandCalls(GetObjectCommand))).toHaveLength(1);
    expect(existsSync(join(dir, 'tight', OTHER))).toBe(false);
  });
});

describe('the events of archive objects equal the local archive reader over the same objects', () => {
  freshArchive('archive-copies-prop-');

  it('for random events split into random objects, duplicates across objects included (fast-check)', async () => {
    console.log(`archive copies property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const start = Date.UTC(2026, 3, 9);
    const eventArb = fc.record({
      visitor: fc.integer({ min: 0, max: 5 }),
      minute: fc.integer({ min: 0, max: 3 * 24 * 60 - 1 }),
      path: fc.constantFrom('/', '/pricing', '/blog', '/docs'),
      object: fc.nat(),
      twice: fc.option(fc.nat(), { freq: 5 }),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        async (drawn, n) => {
          await rm(archive, { recursive: true, force: true });
          bucket.objects.clear();
          const events = drawn.map((d, i) => view(`visitor-${d.visitor}0`, start + d.minute * MIN, `e-${i}`, d.path));
          const objects = Array.from({ length: n }, () => [] as TrackedEvent[]);
          drawn.forEach((d, i) => {
            objects[d.object % n]!.push(events[i]!);
            if (d.twice !== null) objects[d.twice % n]!.push(events[i]!);
          });
          for (const o of objects) if (o.length > 0) await deliver(o);
          const copies = new ArchiveCopies(bucketObjects(), join(dir, `copies-${++run}`));
          const [fromDt, toDt] = ['2026-04-07', '2026-04-13'];
          const direct = await collect(await (await copies.snapshot(SITE, fromDt, toDt)).events());
          const athena = await collect(await new DuckDbArchiveReader(archive).events(SITE, fromDt, toDt));
          const key = (e: TrackedEvent) => `${e.ts} ${e.event_id}`;
          expect(direct.map(key)).toEqual(athena.map(key));
          expect(direct).toEqual(athena);
          const rows = (all: TrackedEvent[]) =>
            visitRowsOfDays(all, namespaceOf(site), 'UTC', '2026-04-09', '2026-04-11').sort((a, b) =>
              a.visit_id < b.visit_id ? -1 : 1,
            );
          expect(rows(direct)).toEqual(rows(athena));
          expect(rows(direct)).toEqual(rows(events));
        },
      ),
      { seed, numRuns: propertyRuns(10, 60) },
    );
  });
});
