import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess, runCliWithStdin } from '../support/cli.js';
import { CHROME_UA } from '../support/events.js';
import { localPaths, openLocalStore } from '../../local/service.js';
import { runSql } from '../../local/sql.js';
import { importEventLines } from '../../local/import-events.js';
import { localImportedIds } from '../../local/imported-ids.js';
import { readRollups } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';

const BOT = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';

describe('footfall import events', () => {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-import-'));
    expect((await runCliInProcess(['--data', dataDir, 'accounts', 'add', 'acme'])).status).toBe(0);
    expect(
      (
        await runCliInProcess([
          '--data',
          dataDir,
          'sites',
          'add',
          'example.com',
          '--timezone',
          'America/New_York',
          '--account',
          'acme',
        ])
      ).status,
    ).toBe(0);
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('imports valid lines with their timestamps, reports bad lines by number, and sessionizes', async () => {
    const line = (o: Record<string, unknown>) =>
      JSON.stringify({ n: 'pageview', u: 'https://example.com/', ua: CHROME_UA, ...o });
    const file = join(dataDir, 'events.jsonl');
    await writeFile(
      file,
      [
        line({
          ts: '2025-06-01T14:00:00Z',
          v: 'visitor-0001',
          r: 'https://www.google.com/',
          country: 'us',
          language: 'en-US,en;q=0.9',
        }),
        line({ ts: '2025-06-01T14:10:00Z', v: 'visitor-0001', u: 'https://example.com/pricing' }),
        line({ ts: '2025-06-01T14:12:00Z', v: 'visitor-0001', n: 'goal', g: 'Signup' }),
        '{broken',
        line({ ts: 'yesterday', v: 'visitor-0002' }),
        line({ ts: '2025-06-02T03:00:00Z', ip: '198.51.100.4', s: 'other.org' }),
        line({ ts: '2025-06-02T03:00:00Z', ip: '198.51.100.4', ua: BOT }),
        '',
        line({ ts: '2025-06-02T03:30:00Z', ip: '198.51.100.4', u: 'https://example.com/blog' }),
      ].join('\n'),
    );
    const result = await runCliInProcess([
      '--data',
      dataDir,
      '--json',
      'import',
      'events',
      file,
      '--site',
      'example.com',
    ]);
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ lines: 9, accepted: 4, invalid: 3, dropped: { bot: 1 }, sessionized: 4 });
    expect(summary.errors).toEqual([
      'line 4: not JSON',
      'line 5: ts: Invalid ISO datetime',
      'line 6: s: other.org is not the imported site example.com',
    ]);

    const sql = await runCliInProcess([
      '--data',
      dataDir,
      '--json',
      'sql',
      "SELECT dt, count(*) AS n FROM events WHERE site = 'example.com' GROUP BY dt ORDER BY dt",
    ]);
    expect(sql.status, sql.stderr).toBe(0);
    expect(JSON.parse(sql.stdout)).toEqual([
      { dt: '2025-06-01', n: 3 },
      { dt: '2025-06-02', n: 1 },
    ]);

    const { dynamo, db } = await openLocalStore(dataDir, 'cli');
    try {
      // 14:00Z is 10:00 in New York; 03:00Z on June 2 is still June 1 there.
      const [day] = await readRollups(dynamo, 'example.com', 'visits', 'D', '2025-06-01', '2025-06-01');
      expect(day).toMatchObject({ visits: 2, pageviews: 3, ids: expect.any(Array) });
      expect(day?.ids).toHaveLength(2);
      const [visit] = await new DynamoVisitStore(dynamo).visitsAround('example.com', 'visitor-0001', 0, Date.now());
      expect(visit).toMatchObject({
        start: Date.parse('2025-06-01T14:00:00Z'),
        attrs: { channel: 'Search', country: 'US', language: 'en-US' },
      });
      expect(visit?.events.map((e) => e.goal ?? e.path)).toEqual(['/', '/pricing', 'Signup']);
    } finally {
      dynamo.doc.destroy();
      await db.close();
    }
  });

  describe('reads every line of every size, from a file and from standard input', () => {
    /** A valid event line of about `bytes` bytes (the padding is in the query string, which no column keeps). */
    const eventLine = (name: string, i: number, bytes = 0) =>
      JSON.stringify({
        n: 'pageview',
        u: `https://example.com/case-${name}/p${i % 7}?q=${'x'.repeat(bytes)}`,
        ts: new Date(Date.UTC(2025, 2, 1) + i * 60_000).toISOString(),
        v: `visitor-${String(i % 20).padStart(4, '0')}`,
        ua: CHROME_UA,
      });
    // The 1 MB case has lines from 200 bytes to 2.1 KB, so line ends fall anywhere in the reader's chunks.
    const cases: Array<{ name: string; lines: (name: string) => string[]; end: string }> = [
      { name: '0-bytes', lines: () => [], end: '' },
      { name: '1-line-no-newline', lines: (n) => [eventLine(n, 0)], end: '' },
      { name: '3-lines', lines: (n) => [0, 1, 2].map((i) => eventLine(n, i)), end: '\n' },
      {
        name: '1-MB',
        lines: (n) => {
          const out: string[] = [];
          for (let i = 0, size = 0; size < 1_000_000; i++) {
            out.push(eventLine(n, i, (i * 613) % 1900));
            size += (out[i]?.length ?? 0) + 1;
          }
          return out;
        },
        end: '\n',
      },
    ];

    const archived = async (name: string) => {
      const { rows } = await runSql(
        localPaths(dataDir).archive,
        `SELECT count(*) FROM events WHERE path LIKE '/case-${name}/%'`,
      );
      return rows[0]?.[0];
    };

    it.each(cases.flatMap((c) => (['file', 'stdin'] as const).map((source) => ({ ...c, source }))))(
      '$name from $source',
      async ({ name, lines: make, end, source }) => {
        const tag = `${name}-${source}`;
        const file = join(dataDir, `${tag}.jsonl`);
        const content = make(tag);
        const lines = content.length;
        await writeFile(file, content.join('\n') + (lines > 0 ? end : ''));
        const args = [
          '--data',
          dataDir,
          '--json',
          'import',
          'events',
          source === 'file' ? file : '-',
          '--site',
          'example.com',
        ];
        const result = source === 'file' ? await runCliInProcess(args) : await runCliWithStdin(args, file);
        expect(result.status, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ lines, accepted: lines, invalid: 0, sessionized: lines });
        expect(await archived(tag)).toBe(lines);
      },
      60_000,
    );
  });

  describe('is idempotent: the same line imported twice is one event', () => {
    const line = (path: string, minute: number) =>
      JSON.stringify({
        n: 'pageview',
        u: `https://example.com/again/${path}`,
        ts: new Date(Date.UTC(2025, 3, 1, 9, minute)).toISOString(),
        v: 'visitor-again',
        ua: CHROME_UA,
      });
    const archived = async () =>
      (
        await runSql(
          localPaths(dataDir).archive,
          "SELECT count(*), count(DISTINCT event_id) FROM events WHERE path LIKE '/again/%'",
        )
      ).rows[0];

    it('skips lines already imported, in a file imported again and in a file that grew, and says how many', async () => {
      const first = join(dataDir, 'again-1.jsonl');
      await writeFile(first, [line('a', 0), line('b', 1), line('c', 2)].join('\n'));
      const once = await runCliInProcess([
        '--data',
        dataDir,
        '--json',
        'import',
        'events',
        first,
        '--site',
        'example.com',
      ]);
      expect(JSON.parse(once.stdout)).toMatchObject({ lines: 3, accepted: 3, already_imported: 0 });
      const twice = await runCliInProcess([
        '--data',
        dataDir,
        '--json',
        'import',
        'events',
        first,
        '--site',
        'example.com',
      ]);
      expect(JSON.parse(twice.stdout)).toMatchObject({ lines: 3, accepted: 0, already_imported: 3, sessionized: 0 });
      expect(await archived()).toEqual([3, 3]);

      // A line above, a second copy of c (a second page view in that second) and a line below are new.
      const grown = join(dataDir, 'again-2.jsonl');
      await writeFile(
        grown,
        [line('z', 0), line('a', 0), line('b', 1), line('c', 2), line('c', 2), line('d', 3)].join('\n'),
      );
      const text = await runCliInProcess(['--data', dataDir, 'import', 'events', grown, '--site', 'example.com']);
      expect(text.stdout).toContain('read 6 lines: 3 accepted, 3 already imported (skipped), 0 invalid');
      expect(await archived()).toEqual([6, 6]);

      const { dynamo, db } = await openLocalStore(dataDir, 'cli');
      try {
        const visits = await new DynamoVisitStore(dynamo).visitsAround('example.com', 'visitor-again', 0, Date.now());
        expect(visits.flatMap((v) => v.events.map((e) => e.path)).sort()).toEqual([
          '/again/a',
          '/again/b',
          '/again/c',
          '/again/c',
          '/again/d',
          '/again/z',
        ]);
      } finally {
        dynamo.doc.destroy();
        await db.close();
      }
    }, 120_000);

    it('finds lines written to the stream but not archived yet', async () => {
      const lines = [line('tail-1', 30), line('tail-2', 31)];
      const { dynamo, db } = await openLocalStore(dataDir, 'cli');
      try {
        const paths = localPaths(dataDir);
        const known = (site: string) => localImportedIds(paths, site);
        // Nothing archives between the two imports: the second finds the first's events on the stream.
        expect(await importEventLines(dynamo, paths.stream, lines, { site: 'example.com', known })).toMatchObject({
          accepted: 2,
          already_imported: 0,
        });
        expect(await importEventLines(dynamo, paths.stream, lines, { site: 'example.com', known })).toMatchObject({
          accepted: 0,
          already_imported: 2,
        });
      } finally {
        dynamo.doc.destroy();
        await db.close();
      }
    });
  });

  it('exits 1 for a missing file and 2 for a bad --site', async () => {
    expect(await runCliInProcess(['--data', dataDir, 'import', 'events', join(dataDir, 'nope.jsonl')])).toMatchObject({
      status: 1,
    });
    expect(
      await runCliInProcess(['--data', dataDir, 'import', 'events', 'x.jsonl', '--site', 'not a site']),
    ).toMatchObject({
      status: 2,
    });
  });
});
