import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DISTINCT_PAGES, FORMS_KEPT, FileForms, beforeCurrentForm } from '../../local/file-forms.js';
import { sqlLiteral } from '../../local/sql.js';

/**
 * The visit table's readers keep each file's form for its current version only, and at most `FORMS_KEPT` files
 * (`local/file-forms.ts`): the long-running local service reads files the writer replaces with every write.
 */
let dir: string;
let db: DuckDBConnection;
let queries = 0;
/** The connection `FileForms` reads with, counting its queries (two a file read). */
const counted = async (): Promise<DuckDBConnection> =>
  new Proxy(db, {
    get(target, name, receiver) {
      if (name === 'runAndReadAll') queries++;
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

const OLD_FORM = beforeCurrentForm({ everyKey: false, someKey: false, distinctPages: false, someLinks: false });

/** Writes `file` in the current form (`current`) or the old one (no `visitor_key`, no `links`, no mark), `rows` rows. */
async function write(file: string, current: boolean, rows: number): Promise<void> {
  const key = current ? ', i::UBIGINT AS visitor_key, [i::UINTEGER] AS links' : '';
  const mark = current ? `, KV_METADATA {${DISTINCT_PAGES.key}: '${DISTINCT_PAGES.value}'}` : '';
  await db.run(
    `COPY (SELECT i::VARCHAR AS visitor_id, ['/'] AS pages${key} FROM range(${rows}) t(i)) ` +
      `TO ${sqlLiteral(file)} (FORMAT PARQUET${mark})`,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'footfall-forms-'));
  db = await (await DuckDBInstance.create(':memory:')).connect();
});

afterAll(async () => {
  db.closeSync();
  await rm(dir, { recursive: true, force: true });
});

describe('FileForms', () => {
  it('keeps one form per file however often the writer replaces it, and reads each new version', async () => {
    const forms = new FileForms(counted);
    const file = join(dir, 'month.parquet');
    for (let version = 0; version < 40; version++) {
      const current = version % 2 === 0;
      await write(file, current, version + 1);
      expect(await forms.columns([file]), `version ${version}`).toBe(current ? '*' : OLD_FORM);
      expect(forms.size).toBe(1);
    }
    // The current version's form is kept: read again, no query.
    queries = 0;
    expect(await forms.columns([file])).toBe(OLD_FORM);
    expect(queries).toBe(0);
  });

  it('keeps at most FORMS_KEPT files, dropping the least recently read', async () => {
    // Files of the current form by what the stand-in answers, no file needed: the bound is on paths.
    let reads = 0;
    const stub = {
      runAndReadAll: async () => {
        reads++;
        return { getRowsJS: () => [[1, 1]] };
      },
    } as unknown as DuckDBConnection;
    const forms = new FileForms(async () => stub);
    const file = (n: number) => join(dir, 'lru', `f${n}.parquet`);
    for (let n = 0; n < FORMS_KEPT + 50; n++) {
      expect(await forms.columns([file(n)])).toBe('*');
      // The first file, read all along, stays.
      if (n % 100 === 0) await forms.columns([file(0)]);
      expect(forms.size).toBe(Math.min(n + 1, FORMS_KEPT));
    }
    reads = 0;
    await forms.columns([file(0)]);
    expect(reads).toBe(0);
    // The second, read once at the start, is gone and read again.
    await forms.columns([file(1)]);
    expect(reads).toBe(2);
  });

  it('reads a file without links as clicking none (NULL, as the writer writes none), beside a file with them', async () => {
    const forms = new FileForms(counted);
    const [old, current] = [join(dir, 'old-links.parquet'), join(dir, 'links.parquet')];
    await write(old, false, 2);
    await write(current, true, 2);
    const both = `[${[old, current].map(sqlLiteral).join(', ')}]`;
    const select = await forms.columns([old, current]);
    const rows = (
      await db.runAndReadAll(
        `SELECT visitor_id, links FROM (SELECT ${select}, filename FROM read_parquet(${both}, union_by_name = true, filename = true)) ORDER BY filename, visitor_id`,
      )
    ).getRowsJS();
    // links.parquet sorts before old-links.parquet.
    expect(rows).toEqual([
      ['0', [0]],
      ['1', [1]],
      ['0', null],
      ['1', null],
    ]);
    const alone = (
      await db.runAndReadAll(
        `SELECT links FROM (SELECT ${await forms.columns([old])} FROM read_parquet(${sqlLiteral(old)}))`,
      )
    ).getRowsJS();
    expect(alone).toEqual([[null], [null]]);
  });

  it('reads the stored key as it is where every file has it, without visitor_id, when only links are missing', async () => {
    // Files written after the key and before links: no visitor_id column, so reading one would fail to bind.
    const forms = new FileForms(counted);
    const files = [join(dir, 'key-no-links-1.parquet'), join(dir, 'key-no-links-2.parquet')];
    for (const [n, file] of files.entries()) {
      await db.run(
        `COPY (SELECT (i + ${10 * n})::UBIGINT AS visitor_key, ['/'] AS pages FROM range(2) t(i)) ` +
          `TO ${sqlLiteral(file)} (FORMAT PARQUET, KV_METADATA {${DISTINCT_PAGES.key}: '${DISTINCT_PAGES.value}'})`,
      );
    }
    const select = await forms.columns(files);
    expect(select).not.toBe('*');
    const rows = (
      await db.runAndReadAll(
        `SELECT visitor_key, links FROM (SELECT ${select} FROM read_parquet([${files.map(sqlLiteral).join(', ')}], ` +
          `union_by_name = true)) ORDER BY visitor_key`,
      )
    ).getRowsJS();
    expect(rows).toEqual([
      [0n, null],
      [1n, null],
      [10n, null],
      [11n, null],
    ]);
  });

  it('forgets a failed read, so the file is read when it can be', async () => {
    const forms = new FileForms(counted);
    const file = join(dir, 'later.parquet');
    await expect(forms.columns([file])).rejects.toThrow();
    expect(forms.size).toBe(0);
    await write(file, true, 3);
    expect(await forms.columns([file])).toBe('*');
  });
});
