import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { STDIN, openLines } from '../../cli/lines.js';

/** A slow consumer: real awaits between lines, as an import has (stream open, enrichment, DynamoDB). */
async function countSlowly(
  lines: AsyncIterable<string>,
  every = 1,
): Promise<{ count: number; last: string | undefined; bytes: number }> {
  let count = 0;
  let last: string | undefined;
  let bytes = 0;
  for await (const line of lines) {
    count++;
    last = line;
    bytes += Buffer.byteLength(line) + 1;
    if (count % every === 0) await nextTurn();
  }
  return { count, last, bytes };
}

/** Standard input as a pipe: the file's bytes through a PassThrough, in 64 KiB chunks, as `cat file |` gives them. */
function pipeOf(file: string): PassThrough {
  const pipe = new PassThrough();
  createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(pipe);
  return pipe;
}

const SOURCES = ['file', 'stdin'] as const;

describe('openLines: every line of a file or of standard input', () => {
  let dir = '';
  const files: Record<string, { path: string; lines: number; last: string }> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-lines-'));
    const put = async (name: string, text: string, lines: number, last: string) => {
      const path = join(dir, name);
      await writeFile(path, text);
      files[name] = { path, lines, last };
    };
    await put('empty', '', 0, '');
    await put('one-no-newline', '{"a":1}', 1, '{"a":1}');
    await put('three', '{"a":1}\n{"a":2}\n{"a":3}\n', 3, '{"a":3}');
    await put('three-crlf', '{"a":1}\r\n{"a":2}\r\n{"a":3}', 3, '{"a":3}');
    // 1 MB of lines of varied length (1 to 4,000 bytes), so line ends fall on every chunk offset.
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < 1_000_000; i++) {
      const line = `${i}:${'x'.repeat((i * 7919) % 4000)}`;
      parts.push(line);
      size += line.length + 1;
    }
    await put('1mb', `${parts.join('\n')}\n`, parts.length, parts[parts.length - 1] as string);
    // 100 MB, written in blocks so the test never holds it as one string.
    const path = join(dir, '100mb');
    const handle = await open(path, 'w');
    const line = `{"n":"pageview","u":"https://example.com/${'p'.repeat(80)}"}`;
    const block = `${line}\n`.repeat(10_000);
    const blocks = Math.ceil(100_000_000 / Buffer.byteLength(block));
    for (let b = 0; b < blocks; b++) await handle.write(block);
    await handle.close();
    files['100mb'] = { path, lines: blocks * 10_000, last: line };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each(
    SOURCES.flatMap((source) =>
      ['empty', 'one-no-newline', 'three', 'three-crlf', '1mb'].map((name) => [name, source] as const),
    ),
  )('%s from %s, with an await before the first read', async (name, source) => {
    const file = files[name]!;
    const opened = await openLines(source === 'file' ? file.path : STDIN, pipeOf(file.path));
    // The import race: the consumer attaches after other async work.
    await new Promise((r) => setTimeout(r, 50));
    await nextTurn();
    const read = await countSlowly(opened.lines);
    expect(read.count).toBe(file.lines);
    if (file.lines > 0) expect(read.last).toBe(file.last);
    if (source === 'file') expect(opened.size).toBeGreaterThanOrEqual(read.bytes - 1);
    else expect(opened.size).toBeNull();
  });

  it.each(SOURCES)(
    '100 MB from %s: every line, the whole byte count',
    async (source) => {
      const file = files['100mb']!;
      const opened = await openLines(source === 'file' ? file.path : STDIN, pipeOf(file.path));
      await nextTurn();
      const read = await countSlowly(opened.lines, 1000);
      expect(read.count).toBe(file.lines);
      expect(read.last).toBe(file.last);
      expect(opened.bytesRead()).toBe(read.bytes);
      expect(read.bytes).toBeGreaterThanOrEqual(100_000_000);
    },
    60_000,
  );

  it('reports a missing file or a directory as cannot read', async () => {
    await expect(openLines(join(dir, 'nope'))).rejects.toThrow(`cannot read ${join(dir, 'nope')}`);
    await expect(openLines(dir)).rejects.toThrow(`cannot read ${dir}`);
  });
});
