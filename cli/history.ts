import { createReadStream } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import * as z from 'zod';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import {
  mapPage,
  type HistoryPage,
  type HistoryRange,
  type HistorySource,
} from '../lambdas/domain/payments/history-source.js';
import { readPage } from '../lambdas/services/history-pages.js';

export interface HistoryOptions {
  range: HistoryRange;
  /** A JSON-lines file holding the pages read so far: a rerun with the same range goes on at each list's cursor. */
  checkpoint: string;
  /** After each page: the list being read and the objects read so far (earlier runs' too). */
  onProgress?: (progress: { kind: string; total: number }) => void;
  /** ms before the n-th ask of a page in a row after a rate limit (1-based), at least the API's hint (`readPage`). */
  backoffMs?: (attempt: number) => number;
}

export interface History {
  facts: ProviderFacts[];
  /** Objects read, this run and earlier runs of the same checkpoint. */
  objects: number;
  /** Objects whose state a webhook mapping refused (the message names the event type). */
  invalid: string[];
}

const rangeSchema = z.object({ since: z.number().nullable(), until: z.number().nullable() });
const lineSchema = z.union([
  z.object({ range: rangeSchema }),
  z.object({ kind: z.string(), objects: z.array(z.unknown()), next: z.string().nullable() }),
]);

/** What has been read: the facts in the order read, each list's cursor, the objects whose mapping refused them. */
function history<K extends string>(source: HistorySource<K>) {
  const facts: ProviderFacts[] = [];
  const cursors = new Map<string, string | null>();
  const invalid: string[] = [];
  let objects = 0;
  return {
    /** Maps a page as it is read: only its facts stay in memory, not its objects. */
    add(kind: K, page: HistoryPage) {
      objects += page.objects.length;
      const mapped = mapPage(source, kind, page.objects);
      facts.push(...mapped.facts);
      invalid.push(...mapped.invalid);
      cursors.set(kind, page.next);
    },
    /** undefined: not begun; null: read to its end. */
    cursor: (kind: K) => cursors.get(kind),
    objects: () => objects,
    result: (): History => ({ facts, objects, invalid }),
  };
}

/**
 * Reads a checkpoint file a line (a page) at a time into `read`; returns its range. A line cut short by a
 * crash is the last one and does not parse: that page is read again from the API.
 */
async function readCheckpoint<K extends string>(
  source: HistorySource<K>,
  path: string,
  read: ReturnType<typeof history<K>>,
): Promise<HistoryRange | null> {
  const kinds = new Set<string>(source.kinds);
  let range: HistoryRange | null = null;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const parsed = line ? lineSchema.safeParse(safeJson(line)) : null;
      if (!parsed?.success) continue;
      const entry = parsed.data;
      if ('range' in entry) range = entry.range;
      else if (kinds.has(entry.kind)) read.add(entry.kind as K, entry);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return range;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * Reads a provider's history (`footfall import stripe|lemonsqueezy|paddle|polar`,
 * `docs/payments.md` "Importing a provider's history"): every list of
 * `source.kinds` a page at a time, each page appended to the checkpoint file
 * as one line and mapped to the facts its webhooks would have carried as it
 * arrives; memory holds the facts, not the objects. Resumable: a rerun with
 * the same checkpoint and range goes on at each unfinished list's cursor and
 * skips finished lists; a different range starts over. Rate limits: after an
 * error `source.retryAfterMs` calls one, the page is asked again after the
 * longer of the API's hint and `backoffMs`, up to 8 times in a row.
 * @throws whatever `source.page` throws for an answer other than a rate limit
 */
export async function readHistory<K extends string>(
  source: HistorySource<K>,
  options: HistoryOptions,
): Promise<History> {
  const { range } = options;
  let read = history(source);
  const saved = await readCheckpoint(source, options.checkpoint, read);
  if (!saved || saved.since !== range.since || saved.until !== range.until) {
    await rm(options.checkpoint, { force: true });
    await appendFile(options.checkpoint, `${JSON.stringify({ range })}\n`);
    read = history(source);
  }
  for (const kind of source.kinds) {
    while (read.cursor(kind) !== null) {
      const page = await readPage(source, kind, read.cursor(kind) ?? null, range, options);
      await appendFile(options.checkpoint, `${JSON.stringify({ kind, objects: page.objects, next: page.next })}\n`);
      read.add(kind, page);
      options.onProgress?.({ kind, total: read.objects() });
    }
  }
  return read.result();
}
