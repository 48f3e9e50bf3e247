import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { S3ArchiveChanges } from '../../lambdas/adapters/s3-archive-changes.js';
import { filteredVisitsInS3 } from '../../lambdas/adapters/s3-filtered-visits.js';
import { S3TableFiles, TABLE_FAMILIES, VISIT_TABLE_PREFIX } from '../../lambdas/adapters/s3-table-files.js';
import { S3VisitTable } from '../../lambdas/adapters/s3-visit-table.js';
import { filtersParam, type Filter } from '../../lambdas/domain/reports/filters.js';
import { monthOf, type PaymentTableRow, type VisitRow } from '../../lambdas/domain/visit-table.js';
import type { FilteredRange, FilteredVisits, VisitTableStore } from '../../lambdas/ports.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { LocalVisitTable, monthFilePath } from '../../local/visit-table.js';
import { memoryBucket, type MemoryBucket, type StoredObject } from '../support/memory-bucket.js';

/**
 * The visit table in AWS (`docs/data-model.md`, "Filtered reports") against an in-memory bucket
 * behind aws-sdk-client-mock: the writer's files put under `visit-table/`, the report function's
 * engine (`S3FilteredVisits`) reading them through its `/tmp` copy with the local engine's SQL, and
 * its answers equal to the local engine's over the same rows written locally.
 */

const BUCKET = 'footfall-events';
const SITE = 'shop.test';
/** Keys a listing page holds: small, so every listing here spans pages. */
const PAGE = 2;

let bucket: Map<string, StoredObject>;
let store: MemoryBucket['store'];
let now: number;
const s3 = mockClient(S3Client);
// The class mock stubs every S3 client's `send`: later files sharing this process need the real one back.
afterAll(() => s3.restore());

beforeEach(() => {
  now = Date.parse('2026-04-10T00:00:00Z');
  ({ objects: bucket, store } = memoryBucket(s3, PAGE, () => now));
});

describe('S3ArchiveChanges: the archive days changed since an instant', () => {
  it('lists every page of the site prefix and keeps the days with an object modified at or after it', async () => {
    const since = now - 60_000;
    const parquet = new Uint8Array([1]);
    store('events/site=shop.test/dt=2026-04-01/a.parquet', parquet, new Date(since - 1));
    store('events/site=shop.test/dt=2026-04-02/a.parquet', parquet, new Date(since - 1));
    store('events/site=shop.test/dt=2026-04-02/b.parquet', parquet, new Date(since));
    store('events/site=shop.test/dt=2026-03-30/a.parquet', parquet, new Date(since + 5));
    store('events/site=shop.test/dt=2026-03-30/b.parquet', parquet, new Date(since + 6));
    store('events/site=shop.testing/dt=2026-04-01/a.parquet', parquet, new Date(since + 1));
    store('events/site=other.test/dt=2026-04-03/a.parquet', parquet, new Date(since + 1));
    const changes = new S3ArchiveChanges(new S3Client({}), { bucket: BUCKET, prefix: 'events/' });
    expect(await changes.changedDays(SITE, since)).toEqual(['2026-03-30', '2026-04-02']);
    expect(s3.commandCalls(ListObjectsV2Command).length).toBe(3);
    expect(
      s3.commandCalls(ListObjectsV2Command).every((c) => c.args[0].input.Prefix === 'events/site=shop.test/'),
    ).toBe(true);
  });

  it('refuses a site that is not a domain name before any request', async () => {
    const changes = new S3ArchiveChanges(new S3Client({}), { bucket: BUCKET, prefix: 'events/' });
    await expect(changes.changedDays('../x', 0)).rejects.toThrow();
    expect(s3.commandCalls(ListObjectsV2Command)).toEqual([]);
  });
});

/** A visit of the site. */
function visit(id: string, day: string, dims: { channel: string; device: string }, pages: string[]): VisitRow {
  return {
    visit_id: id,
    visitor_id: `x-${id}`,
    day,
    start_ms: Date.parse(`${day}T10:00:00Z`),
    pageviews: pages.length,
    bounce: pages.length === 1,
    timed: pages.length > 1,
    duration_ms: pages.length > 1 ? 30_000 : 0,
    dimensions: {
      channel: dims.channel,
      referrer_host: null,
      source: dims.channel === 'Search' ? 'Google' : null,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
      utm_term: null,
      utm_content: null,
      country: 'FR',
      device: dims.device,
      browser: 'Firefox',
      os: 'Linux',
      language: 'fr',
    },
    landing_page: pages[0]!,
    exit_page: pages.at(-1) ?? null,
    pages,
    goals: [],
    links: [],
    props: [],
  };
}

/** Visits over three months; `first` is credited with a renewal in April, two months later (past a 30-day lookback). */
const VISITS = [
  visit('first', '2026-02-03', { channel: 'Search', device: 'Mobile' }, ['/', '/pricing']),
  visit('v2', '2026-03-20', { channel: 'Direct', device: 'Desktop' }, ['/blog']),
  visit('v3', '2026-04-02', { channel: 'Search', device: 'Mobile' }, ['/blog', '/blog/intro']),
  visit('v4', '2026-04-03', { channel: 'Search', device: 'Desktop' }, ['/docs']),
  visit('v5', '2026-04-05', { channel: 'Social', device: 'Mobile' }, ['/']),
];
const payment = (key: string, day: string, cents: number, visitOf: VisitRow | null): PaymentTableRow => ({
  key,
  ts: Date.parse(`${day}T12:00:00Z`),
  day,
  cents,
  customer: `c-${key}`,
  failed: false,
  refunded: false,
  visit_id: visitOf?.visit_id ?? null,
  visit_day: visitOf?.day ?? null,
});
const PAYMENTS = [
  payment('stripe:renewal', '2026-04-04', 2_900, VISITS[0]!),
  payment('stripe:new', '2026-04-03', 9_900, VISITS[2]!),
  payment('stripe:none', '2026-04-05', 1_000, null),
];
const RANGE: FilteredRange = { from: '2026-04-01', to: '2026-04-09' };
/** The dashboard's first tabs: each breakdown is the same SQL over another column. */
const PANELS = ['channel', 'page', 'country', 'device'] as const;
const filter = (json: unknown): Filter => filtersParam.parse(JSON.stringify(json))!;
const FILTERS = [
  filter([['is', 'visit:channel', ['Search']]]),
  filter([
    ['is', 'visit:device', ['Mobile']],
    ['contains', 'event:page', ['/blog']],
  ]),
  filter([['is_not', 'visit:channel', ['Social']]]),
];

async function writeAll(table: VisitTableStore, rows: readonly VisitRow[], payments: readonly PaymentTableRow[]) {
  const months = new Map<string, VisitRow[]>();
  for (const r of rows) months.set(monthOf(r), [...(months.get(monthOf(r)) ?? []), r]);
  for (const [month, rs] of months) await table.writeMonth(SITE, month, rs);
  const paid = new Map<string, PaymentTableRow[]>();
  for (const p of payments) paid.set(p.day.slice(0, 7), [...(paid.get(p.day.slice(0, 7)) ?? []), p]);
  for (const [month, ps] of paid) await table.writePayments(SITE, month, ps);
}

/** Every answer of an engine for the filters over the range. */
async function answers(engine: FilteredVisits) {
  const out: unknown[] = [];
  for (const f of FILTERS) {
    out.push(await engine.totals(SITE, f, RANGE), await engine.payments(SITE, f, RANGE));
    for (const d of PANELS) out.push([d, [...(await engine.breakdown(SITE, f, RANGE, d))].sort()]);
    const input = await engine.input(SITE, f, RANGE);
    out.push(input.rows.map((r) => r.visit_id).sort(), input.payments.map((p) => p.visit?.visit_id).sort());
  }
  return out;
}

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ff-s3-table-'));
  dirs.push(dir);
  return dir;
};
const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close();
});
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const files = async (family: keyof typeof TABLE_FAMILIES, limitBytes = Infinity) =>
  new S3TableFiles(
    new S3Client({}),
    { bucket: BUCKET, families: TABLE_FAMILIES[family], listTtlMs: 60_000, limitBytes, clock: () => now },
    await tempDir(),
  );
const writer = async () => {
  const table = new S3VisitTable(await files('write'));
  closing.push(table);
  return table;
};
const reader = async (limitBytes?: number) => {
  const f = await files('read', limitBytes);
  const engine = filteredVisitsInS3(f);
  closing.push(engine);
  return { engine, root: f.root };
};

let expected: unknown[];
beforeAll(async () => {
  // The local twin over the same rows: what the S3 reader must answer.
  const root = await tempDir();
  const table = new LocalVisitTable(root);
  await writeAll(table, VISITS, PAYMENTS);
  await table.close();
  const local = new LocalFilteredVisits(root);
  expected = await answers(local);
  await local.close();
});

describe('the visit table on S3', () => {
  it('is written under visit-table/ only, by family and site, and read back by a cold writer', async () => {
    await writeAll(await writer(), VISITS, PAYMENTS);
    const keys = [...bucket.keys()].sort();
    expect(keys).toEqual([
      `${VISIT_TABLE_PREFIX}dict/site=${SITE}/dict.parquet`,
      `${VISIT_TABLE_PREFIX}payments/site=${SITE}/mo=2026-04/data.parquet`,
      `${VISIT_TABLE_PREFIX}visits/site=${SITE}/mo=2026-02/data.parquet`,
      `${VISIT_TABLE_PREFIX}visits/site=${SITE}/mo=2026-03/data.parquet`,
      `${VISIT_TABLE_PREFIX}visits/site=${SITE}/mo=2026-04/data.parquet`,
    ]);
    const cold = await writer();
    await cold.setWrittenThrough(SITE, '2026-04-08');
    await cold.setChangesSeen(SITE, now);
    const colder = await writer();
    expect(await colder.months(SITE)).toEqual({ visits: ['2026-02', '2026-03', '2026-04'], payments: ['2026-04'] });
    expect(await colder.writtenThrough(SITE)).toBe('2026-04-08');
    expect(await colder.changesSeen(SITE)).toBe(now);
    expect(await colder.readMonth(SITE, '2026-03')).toEqual([VISITS[1]]);
  });

  it('extends the dictionary S3 holds when a cold writer adds values, so earlier months still read', async () => {
    await writeAll(await writer(), VISITS.slice(0, 2), []);
    const later = visit('v9', '2026-04-06', { channel: 'AI', device: 'Tablet' }, ['/new']);
    await (await writer()).writeMonth(SITE, '2026-04', [later]);
    const check = await writer();
    expect(await check.readMonth(SITE, '2026-02')).toEqual([VISITS[0]]);
    expect(await check.readMonth(SITE, '2026-04')).toEqual([later]);
  });

  it('answers filtered reads equal to the local engine over the same rows, renewals of older visits included', async () => {
    await writeAll(await writer(), VISITS, PAYMENTS);
    const { engine, root } = await reader();
    const got = await answers(engine);
    expect(got).toEqual(expected);
    // The renewal's visit (February) rides on its payment: counted, and no visit month before the range's fetched.
    expect(got[1]).toMatchObject({ payments: 2, cents: 12_800 });
    expect(existsSync(monthFilePath(root, SITE, '2026-04'))).toBe(true);
    expect(existsSync(monthFilePath(root, SITE, '2026-02'))).toBe(false);
  });

  it('fetches a file once per version, lists once per TTL, and follows a rewrite and a drop', async () => {
    const table = await writer();
    await writeAll(table, VISITS, PAYMENTS);
    const { engine } = await reader();
    const search = FILTERS[0]!;
    await engine.totals(SITE, search, RANGE);
    const gets = s3.commandCalls(GetObjectCommand).length;
    const lists = s3.commandCalls(ListObjectsV2Command).length;
    await engine.totals(SITE, search, RANGE);
    await engine.breakdown(SITE, search, RANGE, 'page');
    expect(s3.commandCalls(GetObjectCommand).length).toBe(gets);
    expect(s3.commandCalls(ListObjectsV2Command).length).toBe(lists);

    await table.writeMonth(SITE, '2026-04', [
      ...VISITS.slice(2),
      visit('v6', '2026-04-07', { channel: 'Search', device: 'Mobile' }, ['/']),
    ]);
    expect((await engine.totals(SITE, search, RANGE)).sessions).toBe(2);
    now += 60_000;
    expect((await engine.totals(SITE, search, RANGE)).sessions).toBe(3);
    // The dictionary is unchanged (no new value) and the other months too: only April is fetched again.
    expect(
      s3
        .commandCalls(GetObjectCommand)
        .slice(gets)
        .map((c) => c.args[0].input.Key),
    ).toEqual([`${VISIT_TABLE_PREFIX}visits/site=${SITE}/mo=2026-04/data.parquet`]);

    await table.dropSite(SITE);
    expect([...bucket.keys()]).toEqual([]);
    now += 60_000;
    expect((await engine.totals(SITE, search, RANGE)).sessions).toBe(0);
  });

  it('keeps at most its limit of copies once no read holds them, and reads the same again', async () => {
    await writeAll(await writer(), VISITS, PAYMENTS);
    const { engine, root } = await reader(1);
    expect(await answers(engine)).toEqual(expected);
    const left = existsSync(join(root, 'visits')) ? await readdir(join(root, 'visits'), { recursive: true }) : [];
    expect(left.filter((f) => String(f).endsWith('.parquet'))).toEqual([]);
  });
});
