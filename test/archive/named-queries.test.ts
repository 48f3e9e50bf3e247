import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createArchiveConsumer } from '../../local/archive.js';
import { runSql } from '../../local/sql.js';
import { NAMED_QUERIES } from '../../sql/named-queries.js';
import { DATASET, recordsOf } from './dataset.js';

const github = 'https://github.com/footfall/footfall';

/**
 * What each named query returns on DATASET. In range (example.com, January):
 * page views a1 `/` v1 Search, a3 `/pricing` v1 Direct, a4 `/` v1 Direct,
 * b1 `/` v2 Communities (news.ycombinator.com), c1 `/pricing` v3 Paid (www.google.com);
 * goals a2 and c2 (outbound to GitHub, v1 and v3), c3 (outbound to X, v3), b2 (signup, v2).
 * d1 (February) and s1, s2 (shop.example.org) are out.
 */
const EXPECTED: Record<string, { columns: string[]; rows: unknown[][] }> = {
  top_pages: {
    columns: ['path', 'pageviews', 'visitors'],
    rows: [
      ['/', 3, 2],
      ['/pricing', 2, 2],
    ],
  },
  channels: {
    columns: ['channel', 'pageviews', 'visitors'],
    rows: [
      ['Direct', 2, 1],
      ['Communities', 1, 1],
      ['Paid', 1, 1],
      ['Search', 1, 1],
    ],
  },
  top_referrers: {
    columns: ['referrer_host', 'pageviews', 'visitors'],
    rows: [
      ['www.google.com', 2, 2],
      ['news.ycombinator.com', 1, 1],
    ],
  },
  goals: {
    columns: ['goal', 'conversions', 'visitors'],
    rows: [
      ['Outbound Link: Click', 3, 2],
      ['signup', 1, 1],
    ],
  },
  outbound_links: {
    columns: ['link', 'clicks', 'visitors'],
    rows: [
      [github, 2, 2],
      ['https://x.com/footfall', 1, 1],
    ],
  },
  visitor_events: {
    columns: ['ts', 'type', 'goal', 'path', 'link', 'channel', 'source', 'referrer_host', 'event_id'],
    rows: [
      ['2026-01-14T23:59:59.999Z', 'pageview', null, '/', null, 'Search', 'Google', 'www.google.com', 'a1'],
      ['2026-01-15T00:00:00.000Z', 'goal', 'Outbound Link: Click', '/', github, 'Direct', null, null, 'a2'],
      ['2026-01-15T00:05:00.000Z', 'pageview', null, '/pricing', null, 'Direct', null, null, 'a3'],
      ['2026-01-15T00:10:00.000Z', 'pageview', null, '/', null, 'Direct', null, null, 'a4'],
    ],
  },
  events_per_day: {
    columns: ['dt', 'total_events', 'pageviews', 'visitors'],
    rows: [
      ['2026-01-14', 4, 2, 2],
      ['2026-01-15', 5, 3, 2],
    ],
  },
};

describe('named queries: portable SQL shipped to Athena, run here on DuckDB', () => {
  let archive = '';
  beforeAll(async () => {
    archive = await mkdtemp(join(tmpdir(), 'ff-named-'));
    const consumer = createArchiveConsumer(archive);
    // Two batches, so that partitions hold several files.
    const records = recordsOf(DATASET);
    await consumer(records.slice(0, 5));
    await consumer(records.slice(5));
    await consumer.close();
  });
  afterAll(async () => rm(archive, { recursive: true, force: true }));

  it('has the queries the docs promise, each with a unique name and a description', () => {
    expect(NAMED_QUERIES.map((q) => q.name).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const q of NAMED_QUERIES) {
      expect(q.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(q.description.length).toBeGreaterThan(20);
    }
  });

  it.each(NAMED_QUERIES.map((q) => [q.name, q] as const))('%s returns the expected rows', async (name, query) => {
    expect(await runSql(archive, query.sql)).toEqual(EXPECTED[name]);
  });

  it.each(NAMED_QUERIES.map((q) => [q.name, q.sql] as const))('%s stays plain, portable SQL', (_name, sql) => {
    // Athena named queries take no parameters, and Trino lacks DuckDB's conveniences.
    expect(sql).not.toMatch(/\$\d|\?|::|\bFILTER\b|\bQUALIFY\b|\bILIKE\b|\bEXCLUDE\b|"/i);
    expect(sql).toMatch(/\bFROM events\b/);
    expect(sql).toContain("site = 'example.com'");
    expect(sql).toContain("dt BETWEEN '2026-01-01' AND '2026-01-31'");
    expect(sql.trim()).not.toMatch(/;$/);
  });
});
