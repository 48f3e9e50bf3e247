import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The file name that means standard input (POSIX utility convention). */
export const STDIN = '-';

/** The lines of a file or of standard input, read only when iterated. */
export interface LineSource {
  /** Every line, without its `\n` or `\r\n`; a last line without a newline is a line. */
  lines: AsyncIterable<string>;
  /** Bytes read so far, for progress. */
  bytesRead(): number;
  /** Size in bytes, or null for standard input. */
  size: number | null;
}

/**
 * Opens `file` (`-`: standard input) for line-by-line reading.
 *
 * Nothing is read until `lines` is iterated: the stream and the readline
 * interface are created inside the generator, with no `await` between the
 * interface's creation and the `for await` that consumes it. A readline
 * interface starts reading its input at once and its `'line'` events are not
 * buffered for a consumer that attaches later (Node's readline docs,
 * "Example: Read file stream line-by-Line"), so any await in between loses
 * lines (`test/cli/lines.test.ts` reproduces the race).
 *
 * @throws Error `cannot read <file>` when the file does not exist or is not a file
 */
export async function openLines(file: string, stdin: Readable = process.stdin): Promise<LineSource> {
  let size: number | null = null;
  if (file !== STDIN) {
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw new Error(`cannot read ${file}`);
    size = info.size;
  }
  let input: { bytesRead: number } | null = null;
  let stdinBytes = 0;
  async function* lines(): AsyncGenerator<string> {
    const stream = file === STDIN ? stdin : createReadStream(file);
    if (file === STDIN) stream.on('data', (chunk: Buffer | string) => (stdinBytes += chunk.length));
    else input = stream as ReturnType<typeof createReadStream>;
    const reader = createInterface({ input: stream, crlfDelay: Infinity });
    try {
      for await (const line of reader) yield line;
    } finally {
      reader.close();
      if (file !== STDIN) stream.destroy();
    }
  }
  return { lines: lines(), bytesRead: () => input?.bytesRead ?? stdinBytes, size };
}
