import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { TRACKED_EVENT_COLUMNS } from '../../lambdas/domain/tracked-event.js';
import { createArchiveConsumer, type ArchiveConsumer, type SkippedRecord } from '../../local/archive.js';
import { SqlError, runSql } from '../../local/sql.js';
import { trackedEvent } from '../support/events.js';
import { propsOf } from '../../lambdas/domain/props.js';
import { DATASET, expectedRow, rawRecord, recordsOf, rowObjects } from './dataset.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ff-archive-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** Every file under `dir`, relative, sorted (temp files included, so leftovers would show). */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const COLUMNS = [...TRACKED_EVENT_COLUMNS.map((c) => c.name), 'site', 'dt'];

describe('archive consumer: Firehose stand-in writing Parquet by site and UTC day', () => {
  let archive = '';
  let consumer: ArchiveConsumer;
  let skipped: SkippedRecord[] = [];
  beforeEach(async () => {
    archive = await tempDir();
    skipped = [];
    consumer = createArchiveConsumer(archive, { onSkip: (s) => skipped.push(s) });
  });
  afterEach(async () => consumer.close());

  it('writes one file per (site, dt) in the Glue layout and reads every column back unchanged', async () => {
    const records = recordsOf(DATASET, 5000);
    await expect(consumer(records)).resolves.toBeNull();
    const part = 'part-00000000000000005000.parquet';
    expect(await listFiles(archive)).toEqual([
      `site=example.com/dt=2026-01-14/${part}`,
      `site=example.com/dt=2026-01-15/${part}`,
      `site=example.com/dt=2026-02-01/${part}`,
      `site=shop.example.org/dt=2026-01-14/${part}`,
      `site=shop.example.org/dt=2026-01-15/${part}`,
    ]);
    expect(consumer.written).toBe(DATASET.length);

    const result = await runSql(archive, 'SELECT * FROM events ORDER BY event_id');
    expect(result.columns).toEqual(COLUMNS);
    const byId = [...DATASET].sort((a, b) => a.event_id.localeCompare(b.event_id));
    expect(rowObjects(result)).toEqual(byId.map(expectedRow));
  });

  it('reads the custom properties back from Parquet equal to those sent, by key', async () => {
    await consumer(recordsOf(DATASET));
    const result = await runSql(
      archive,
      `SELECT event_id, json_extract_string(props, '$.plan') AS plan, json_extract_string(props, '$."a \\"q\\""') AS q, props FROM events WHERE props IS NOT NULL`,
    );
    expect(result.rows).toEqual([['b1', 'pro', 'ü€', '{"plan":"pro","__proto__":"x","a \\"q\\"":"ü€","seats":"3"}']]);
    expect(Object.entries(propsOf(result.rows[0]?.[3] as string))).toEqual([
      ['plan', 'pro'],
      ['__proto__', 'x'],
      ['a "q"', 'ü€'],
      ['seats', '3'],
    ]);
  });

  it('puts 23:59:59.999Z and 00:00:00.000Z on their own UTC days', async () => {
    await consumer(recordsOf(DATASET));
    const result = await runSql(
      archive,
      "SELECT event_id, dt, ts FROM events WHERE event_id IN ('a1', 'a2') ORDER BY ts",
    );
    expect(result.rows).toEqual([
      ['a1', '2026-01-14', '2026-01-14T23:59:59.999Z'],
      ['a2', '2026-01-15', '2026-01-15T00:00:00.000Z'],
    ]);
  });

  it('stores the Glue types inside the file: site is not a column, ts is a ms timestamp, screen_width an int32', async () => {
    await consumer(recordsOf(DATASET));
    const file = join(archive, 'site=example.com', 'dt=2026-01-14', 'part-00000000000000000000.parquet');
    const schema = await runSql(
      archive,
      `SELECT name, type, logical_type FROM parquet_schema('${file}') WHERE name <> 'duckdb_schema'`,
    );
    expect(schema.rows.map((r) => r[0])).toEqual(TRACKED_EVENT_COLUMNS.map((c) => c.name));
    expect(schema.rows.find((r) => r[0] === 'ts')).toEqual([
      'ts',
      'INT64',
      expect.stringContaining('MILLIS=MilliSeconds()'),
    ]);
    expect(schema.rows.find((r) => r[0] === 'screen_width')?.[1]).toBe('INT32');
    const types = await runSql(archive, 'SELECT column_name, column_type FROM (DESCRIBE events)');
    expect(Object.fromEntries(types.rows as [string, string][])).toMatchObject({
      ts: 'TIMESTAMP',
      screen_width: 'INTEGER',
      site: 'VARCHAR',
      dt: 'VARCHAR',
    });
  });

  it('re-delivery of the same batch rewrites the same files instead of duplicating rows', async () => {
    const records = recordsOf(DATASET);
    await consumer(records);
    const files = await listFiles(archive);
    const before = await runSql(archive, 'SELECT * FROM events ORDER BY event_id');
    await consumer(records);
    await consumer(records);
    expect(await listFiles(archive)).toEqual(files);
    expect(await runSql(archive, 'SELECT * FROM events ORDER BY event_id')).toEqual(before);
    expect(before.rows).toHaveLength(DATASET.length);
  });

  it('a retry that starts at the same record but carries more (the log grew) still has each event once', async () => {
    const records = recordsOf(DATASET);
    await consumer(records.slice(0, 4));
    await consumer(records);
    const count = await runSql(archive, 'SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events');
    expect(count.rows).toEqual([[DATASET.length, DATASET.length]]);
  });

  it('later batches add files next to earlier ones in the same partition', async () => {
    const records = recordsOf(DATASET);
    await consumer(records.slice(0, 2));
    await consumer(records.slice(2));
    const files = await listFiles(join(archive, 'site=example.com', 'dt=2026-01-15'));
    expect(files).toEqual(['part-00000000000000000000.parquet', 'part-00000000000000002000.parquet']);
    expect((await runSql(archive, 'SELECT count(*) FROM events')).rows).toEqual([[DATASET.length]]);
  });

  it('skips and reports records it cannot archive, and writes the rest of the batch', async () => {
    const good = trackedEvent({ event_id: 'good', ts: Date.UTC(2026, 0, 14, 9) });
    const records = [
      rawRecord('{"event_id": "torn', 0),
      ...recordsOf([good], 1000),
      rawRecord(JSON.stringify({ ...good, event_id: 'no-ts', ts: 'yesterday' }), 2000),
      rawRecord(JSON.stringify({ ...good, event_id: 'up', site: '..' }), 3000),
      rawRecord(JSON.stringify({ ...good, event_id: 'slash', site: 'a/b' }), 4000),
      rawRecord(JSON.stringify({ ...good, event_id: 'wide', screen_width: 2 ** 40 }), 5000),
      rawRecord(JSON.stringify({ ...good, event_id: 'far', ts: 8.64e15 }), 6000),
    ];
    await expect(consumer(records)).resolves.toBeNull();
    expect(skipped.map((s) => [Number(s.sequenceNumber), s.reason])).toEqual([
      [0, 'data is not JSON'],
      [2000, expect.stringMatching(/^not a tracked event \(ts: /)],
      [3000, 'site ".." is not a safe partition name'],
      [4000, 'site "a/b" is not a safe partition name'],
      [5000, 'screen_width does not fit a int column'],
      [6000, 'ts does not fit a timestamp column'],
    ]);
    expect(consumer.skipped).toBe(6);
    // Named after the batch's first record even though that one was skipped: a re-delivery picks the same name.
    expect(await listFiles(archive)).toEqual(['site=example.com/dt=2026-01-14/part-00000000000000000000.parquet']);
    expect((await runSql(archive, 'SELECT event_id FROM events')).rows).toEqual([['good']]);
  });

  it('a batch of only bad records writes nothing and succeeds', async () => {
    await expect(consumer([rawRecord('nope', 0)])).resolves.toBeNull();
    await expect(consumer([])).resolves.toBeNull();
    await expect(stat(archive)).resolves.toBeDefined();
    expect(await listFiles(archive)).toEqual([]);
  });

  it('logs a skipped record on stderr by default', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const quiet = createArchiveConsumer(await tempDir());
    try {
      await quiet([rawRecord('nope', 42)]);
      expect(warn).toHaveBeenCalledWith('archive: skipped record 00000000000000000042: data is not JSON');
    } finally {
      warn.mockRestore();
      await quiet.close();
    }
  });

  it('writes concurrent batches one at a time and can be used again after close()', async () => {
    const records = recordsOf(DATASET);
    await Promise.all([consumer(records.slice(0, 3)), consumer(records.slice(3, 6)), consumer(records.slice(6))]);
    await consumer.close();
    await consumer(recordsOf([trackedEvent({ event_id: 'after-close', ts: Date.UTC(2026, 0, 14) })], 99_000));
    expect((await runSql(archive, 'SELECT count(*) FROM events')).rows).toEqual([[DATASET.length + 1]]);
    expect((await listFiles(archive)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('runSql: DuckDB over the archive', () => {
  it('has an empty events view with the same columns when there is no archive yet', async () => {
    const missing = join(await tempDir(), 'archive');
    const result = await runSql(missing, 'SELECT * FROM events');
    expect(result).toEqual({ columns: COLUMNS, rows: [] });
    expect((await runSql(missing, "SELECT count(*) AS n FROM events WHERE site = 'example.com'")).rows).toEqual([[0]]);
  });

  it('returns JSON-friendly values', async () => {
    const result = await runSql(
      await tempDir(),
      `SELECT 42::BIGINT AS big, 9007199254740993::BIGINT AS huge, sum(x) AS s, 1.25::DECIMAL(5,2) AS dec,
        TIMESTAMP '2026-01-14 23:59:59.999' AS ts, TIMESTAMP '2026-01-14 01:02:03.000004' AS micro,
        DATE '2026-01-15' AS d, [1, 2] AS list, {'a': 1} AS struct, 'infinity'::TIMESTAMP AS inf, NULL AS nothing
       FROM (VALUES (1), (2)) t(x)`,
    );
    expect(rowObjects(result)).toEqual([
      {
        big: 42,
        huge: '9007199254740993',
        s: 3,
        dec: 1.25,
        ts: '2026-01-14T23:59:59.999Z',
        micro: '2026-01-14T01:02:03.000004Z',
        d: '2026-01-15',
        list: [1, 2],
        struct: { a: 1 },
        inf: 'infinity',
        nothing: null,
      },
    ]);
  });

  it("throws a SqlError with DuckDB's message", async () => {
    const archive = await tempDir();
    await expect(runSql(archive, 'SELEC 1')).rejects.toThrow(SqlError);
    await expect(runSql(archive, 'SELECT nope FROM events')).rejects.toThrow(
      /Binder Error: Referenced column "nope" not found/,
    );
  });
});
