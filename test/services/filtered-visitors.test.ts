import { DuckDBInstance, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filtersParam, type Filter } from '../../lambdas/domain/reports/filters.js';
import { registerPoints, unfilteredSpans } from '../../lambdas/domain/reports/filtered-visitors.js';
import { ROW_DIMENSIONS, type VisitRow } from '../../lambdas/domain/visit-table.js';
import { addVisitors, countVisitors, emptySketch, visitorKey } from '../../lambdas/domain/visitor-sketch.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { LocalVisitTable, monthFilePath } from '../../local/visit-table.js';
import { DISTINCT_PAGES } from '../../local/file-forms.js';
import {
  monthRegisters,
  TOTALS,
  rankedGroups,
  visitorGroups,
  visitorKeySql,
  withRegisters,
} from '../../local/visitor-key.js';
import { sqlLiteral } from '../../local/sql.js';
import { propertyRuns } from '../support/suite.js';

/**
 * Distinct visitors of the filtered engine as the unfiltered sketch counts them (`docs/data-model.md`,
 * "Filtered reports", "Matching the unfiltered sketch"): the stored key is the sketch's key, the SQL
 * registers and ranks are the sketch's (ranks at powers of two included), a count by registers is the
 * sketch's own estimate of the same visitors (equal, not close), and a file written before the key was
 * stored reads the same and is upgraded to the current form.
 */
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

const parse = (json: unknown): Filter => filtersParam.parse(JSON.stringify(json))!;
const SEARCH = parse([['is', 'visit:channel', ['Search']]]);
const EVERYTHING = parse([['contains', 'visit:channel', ['']]]);

/** `countVisitors` of the product's register sketch of `ids` (registers from the first id, whatever their number). */
const sketchCount = (ids: Iterable<string>) =>
  countVisitors(addVisitors(emptySketch(), ids, { exact: 0, precision: 14 }));

/** A visit of `visitor` on `day`: Search for even visitors, Direct for odd; a Signup for every third visitor. */
const visit = (i: number, visitor: number, day: string): VisitRow => ({
  visit_id: `v${i}`,
  visitor_id: `visitor-${visitor}`,
  day,
  start_ms: Date.parse(`${day}T12:00:00Z`) + i,
  pageviews: 1,
  bounce: true,
  timed: false,
  duration_ms: 0,
  dimensions: {
    ...(Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, null])) as VisitRow['dimensions']),
    channel: visitor % 2 === 0 ? 'Search' : 'Direct',
  },

  landing_page: '/',
  exit_page: '/',
  pages: ['/'],
  goals: visitor % 3 === 0 ? ['Signup'] : [],
  links: [],
  props: [],
});

/**
 * The site: 1,500 visitors on 10 March (past the sketch's exact limit), 300 on 11 March (visitors
 * 1,400 to 1,699, so 100 came on both days), every visitor's visit once a day.
 */
const DAY_ONE = Array.from({ length: 1500 }, (_, v) => v);
const DAY_TWO = Array.from({ length: 300 }, (_, v) => 1400 + v);
const ROWS = [
  ...DAY_ONE.map((v, i) => visit(i, v, '2026-03-10')),
  ...DAY_TWO.map((v, i) => visit(DAY_ONE.length + i, v, '2026-03-11')),
];
const RANGE = { from: '2026-03-10', to: '2026-03-11' };
const ids = (visitors: readonly number[], keep: (v: number) => boolean = () => true) =>
  visitors.filter(keep).map((v) => `visitor-${v}`);

describe('filtered distinct visitors by the unfiltered sketch', () => {
  let dir: string;
  let table: LocalVisitTable;
  let engine: LocalFilteredVisits;
  let db: DuckDBConnection;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'filtered-visitors-'));
    table = new LocalVisitTable(dir);
    engine = new LocalFilteredVisits(dir);
    db = await (await DuckDBInstance.create(':memory:')).connect();
    await table.writeMonth('big.test', '2026-03', ROWS);
  });
  afterAll(async () => {
    await engine.close();
    await table.close();
    db.closeSync();
    await rm(dir, { recursive: true, force: true });
  });

  it('computes in SQL the key the sketch takes, for hostile visitor ids too', async () => {
    console.log(`visitor key property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const hostile = ['', "'", '"', "a'); DROP TABLE x; --", 'é', 'é', '日本語', '👩‍💻', '\\', 'x'.repeat(5000)];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 20 }), async (drawn) => {
        const all = [...hostile, ...drawn];
        await db.run('CREATE OR REPLACE TABLE ids (n INTEGER, id VARCHAR)');
        // Through an appender, as the writer stores ids; the literal form is checked below.
        const appender = await db.createAppender('ids');
        all.forEach((id, n) => {
          appender.appendInteger(n);
          appender.appendValue(id, VARCHAR);
          appender.endRow();
        });
        appender.closeSync();
        const rows = (await db.runAndReadAll(`SELECT n, ${visitorKeySql('id')} FROM ids ORDER BY n`)).getRowsJS();
        expect(rows.map(([, key]) => key)).toEqual(all.map(visitorKey));
        const literal = (await db.runAndReadAll(`SELECT ${visitorKeySql(sqlLiteral(all[3]!))}`)).getRowsJS();
        expect(literal[0]?.[0]).toBe(visitorKey(all[3]!));
      }),
      { seed, numRuns: propertyRuns(10, 100) },
    );
  });

  it('ranks a key as 1 + the leading zeros of its 50 low bits, exactly at and just under powers of two', async () => {
    const tails = [
      0n,
      1n,
      2n,
      3n,
      ...Array.from({ length: 50 }, (_, k) => [(1n << BigInt(k)) - 1n, 1n << BigInt(k)]).flat(),
    ];
    const keys = tails.flatMap((tail) => [tail, (16383n << 50n) | tail, (1234n << 50n) | tail]);
    const expected = keys.map((key) => {
      const tail = key & ((1n << 50n) - 1n);
      return [Number(key >> 50n), tail === 0n ? 51 : 51 - tail.toString(2).length];
    });
    const values = keys.map((k, n) => `(${n}, ${k}::UBIGINT)`).join(', ');
    const got = (
      await db.runAndReadAll(
        `SELECT reg, rank FROM (${withRegisters(`SELECT * FROM (VALUES ${values}) t(n, visitor_key)`)}) ORDER BY n`,
      )
    ).getRowsJS();
    expect(got.map(([reg, rank]) => [Number(reg), Number(rank)])).toEqual(expected);
    // A double's log2 rounds these tails up: the integer ranks above are what tells them apart.
    const rounded = (1n << 49n) - 1n;
    expect(Math.floor(Math.log2(Number(rounded)))).toBe(49);
  });

  it('ranks each register by its least tail as its visits’ maximum rank, and merges the month registers into the same registers and sums, per month and over them', async () => {
    console.log(`month registers merge property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    // Keys in a few registers with ranks of every size, so a register holds several keys, within and across months.
    const keyArb = fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.bigInt({ min: 0n, max: (1n << 50n) - 1n }), fc.nat(50))
      .map(([reg, tail, shift]) => (BigInt(reg * 5000) << 50n) | (tail >> BigInt(shift)));
    const rowArb = fc.record({
      // Months of several days, so a month's sums add its days' (`monthRegisters` of a copied table sums per day first).
      day: fc.constantFrom(
        '2025-12-01',
        '2025-12-31',
        '2026-01-01',
        '2026-01-17',
        '2026-02-28',
        '2026-03-01',
        '2026-04-30',
      ),
      key: keyArb,
      pageviews: fc.nat(5),
      bounce: fc.boolean(),
      timed: fc.boolean(),
      duration: fc.nat(600_000),
    });
    const sums = [
      'count(*) AS visits',
      'sum(pageviews) AS pageviews',
      'count(*) FILTER (WHERE bounce) AS bounces',
      'count(*) FILTER (WHERE timed) AS timed_visits',
      'sum(duration_ms) AS duration_ms',
    ];
    const merged = TOTALS.map((name) => `sum(${name}) AS ${name}`);
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 60 }), async (rows) => {
        const values = rows
          .map((r) => `('${r.day}'::DATE, ${r.key}::UBIGINT, ${r.pageviews}, ${r.bounce}, ${r.timed}, ${r.duration})`)
          .join(', ');
        const v = `v AS (SELECT * FROM (VALUES ${values}) x(day, visitor_key, pageviews, bounce, timed, duration_ms))`;
        // Both forms: over a copied table (registers and sums in rows of their own) and over a scan.
        const run = async (select: string, copied = false) =>
          (await db.runAndReadAll(`WITH ${v}, t AS (${monthRegisters(copied)}) ${select} ORDER BY ALL`)).getRowsJS();
        const month = `SELECT *, date_trunc('month', day)::DATE AS period_start FROM v`;
        // By definition: each register's maximum rank over its visits' own ranks, counted per rank.
        const h = 'histogram(rank) FILTER (WHERE rank IS NOT NULL)';
        expect(await run(`SELECT ranks, rank_counts FROM (${visitorGroups('FROM v', [], 'false', [])})`)).toEqual(
          await run(
            `SELECT map_keys(${h}), map_values(${h}) FROM (SELECT reg, max(rank) AS rank FROM (${withRegisters('FROM v')}) GROUP BY reg)`,
          ),
        );
        for (const copied of [false, true]) {
          expect(await run(rankedGroups('FROM t', [], merged), copied)).toEqual(
            await run(visitorGroups('FROM v', [], 'false', sums)),
          );
          expect(await run(rankedGroups('FROM t', ['period_start'], merged), copied)).toEqual(
            await run(visitorGroups(month, ['period_start'], 'false', sums)),
          );
        }
      }),
      { seed, numRuns: propertyRuns(30, 300) },
    );
  });

  it('counts by registers exactly what the sketch of the same visitors counts, totals, points and goals', async () => {
    const search = (v: number) => v % 2 === 0;
    const totals = await engine.totals('big.test', SEARCH, RANGE, 'registers');
    const expected = sketchCount(ids([...new Set([...DAY_ONE, ...DAY_TWO])], search));
    expect(totals.visitors).toBe(expected);
    expect(totals.visitors).not.toBe(ids([...new Set([...DAY_ONE, ...DAY_TWO])], search).length);
    const series = await engine.series('big.test', SEARCH, RANGE, 'day', ['2026-03-10']);
    expect(series.visits.map((p) => [p.period, p.visitors])).toEqual([
      ['2026-03-10', sketchCount(ids(DAY_ONE, search))],
      ['2026-03-11', ids(DAY_TWO, search).length],
    ]);
    const month = await engine.series('big.test', SEARCH, RANGE, 'month', ['2026-03']);
    expect(month.visits.map((p) => [p.period, p.visitors])).toEqual([['2026-03', expected]]);
    const goals = await engine.goals('big.test', EVERYTHING, RANGE, 'registers');
    expect(goals.visitors).toBe(sketchCount(ids([...new Set([...DAY_ONE, ...DAY_TWO])])));
  });

  it('counts exactly when told, however many visitors', async () => {
    const all = new Set([...DAY_ONE, ...DAY_TWO]).size;
    expect((await engine.totals('big.test', EVERYTHING, RANGE, 'exact')).visitors).toBe(all);
    expect((await engine.goals('big.test', EVERYTHING, RANGE)).visitors).toBe(all);
    const series = await engine.series('big.test', EVERYTHING, RANGE, 'month');
    expect(series.visits.map((p) => [p.period, p.visitors])).toEqual([['2026-03', all]]);
  });

  it('counts a point or a range by registers where an unfiltered period holds more than 1,000 visitors', () => {
    const counts = [
      { period: '2026-02-27', visitors: 1000 },
      { period: '2026-03', visitors: 1001 },
      { period: '2026-04-01', visitors: 4 },
    ];
    expect(registerPoints(counts, null)).toEqual(['range']);
    expect(registerPoints(counts.slice(0, 1), null)).toEqual([]);
    expect(registerPoints(counts, 'month')).toEqual(['2026-03']);
    expect(registerPoints([{ period: '2026-03-02', visitors: 2000 }, ...counts], 'day')).toEqual([
      '2026-03',
      '2026-03-02',
    ]);
    expect(unfilteredSpans({ from: '2026-02-27', to: '2026-04-01' }, 'day')).toEqual([
      { granularity: 'D', from: '2026-02-27', to: '2026-04-01' },
    ]);
    expect(unfilteredSpans({ from: '2026-02-27', to: '2026-04-01' }, null).map((s) => s.granularity)).toEqual([
      'D',
      'M',
      'D',
    ]);
  });

  it('reads a month written before the key and the distinct pages were stored, and upgrades it to the form the writer writes now', async () => {
    await table.writeMonth('old.test', '2026-03', ROWS);
    const file = monthFilePath(dir, 'old.test', '2026-03');
    const read = async () => (await db.runAndReadAll(`FROM read_parquet(${sqlLiteral(file)})`)).getRowsJS();
    const current = await read();
    const form = async () => [
      (await db.runAndReadAll(`SELECT name FROM parquet_schema(${sqlLiteral(file)})`)).getRowsJS().map(([n]) => n),
      (
        await db.runAndReadAll(`SELECT decode(key), decode(value) FROM parquet_kv_metadata(${sqlLiteral(file)})`)
      ).getRowsJS(),
    ];
    const written = await form();
    expect(written[1]).toEqual([[DISTINCT_PAGES.key, DISTINCT_PAGES.value]]);
    // The old form: no key, each page listed as often as viewed (twice here), no mark.
    const old = `${file}.old`;
    await db.run(
      `COPY (SELECT * EXCLUDE (visitor_key) REPLACE (list_concat(pages, pages) AS pages) FROM read_parquet(${sqlLiteral(file)})) ` +
        `TO ${sqlLiteral(old)} (FORMAT PARQUET)`,
    );
    await rm(file);
    await db.run(`COPY (FROM read_parquet(${sqlLiteral(old)})) TO ${sqlLiteral(file)} (FORMAT PARQUET)`);
    await rm(old);
    expect(await form()).not.toEqual(written);
    const answers = (site: string) =>
      Promise.all([
        engine.totals(site, SEARCH, RANGE, 'registers'),
        engine.series(site, SEARCH, RANGE, 'day', ['2026-03-10']),
        engine.breakdown(site, SEARCH, RANGE, 'page'),
        engine.input(site, SEARCH, RANGE),
      ]);
    expect(await answers('old.test')).toEqual(await answers('big.test'));
    expect(await table.upgradeOldForms('old.test')).toEqual([file]);
    expect(await form()).toEqual(written);
    expect(await read()).toEqual(current);
    expect(await table.upgradeOldForms('old.test')).toEqual([]);
  });
});
