import { createReadStream } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import { WebhookPayloadError } from '../lambdas/domain/payments/providers/index.js';

/** Times one list is resumed in a row after a rate-limit answer the client's own retries did not absorb. */
const RATE_LIMIT_RESUMES = 8;

/** The created range asked for, Unix seconds: at or after `since`, before `until`; null is unbounded. */
export interface HistoryRange {
  since: number | null;
  until: number | null;
}

/** One page of a list: its objects within the range and the cursor of the next page (null: the list ended). */
export interface HistoryPage {
  objects: readonly unknown[];
  next: string | null;
}

/**
 * A provider's history as lists of objects (`footfall import <provider>`): what `readHistory` pages through.
 * `K` names the lists, read in the order of `kinds`.
 */
export interface HistorySource<K extends string> {
  kinds: readonly K[];
  /** The page of `kind` at `cursor` (null: the first page), only objects created within `range`. */
  page(kind: K, cursor: string | null, range: HistoryRange): Promise<HistoryPage>;
  /**
   * The facts the webhooks of an object's current state would have stated.
   * @throws WebhookPayloadError when the object lacks what its event's mapping reads
   */
  facts(kind: K, object: unknown): ProviderFacts[];
  /** ms to wait before asking a page again after `error` when it is a rate limit (0: no hint, back off); null otherwise. */
  retryAfterMs(error: unknown): number | null;
}

export interface HistoryOptions {
  range: HistoryRange;
  /** A JSON-lines file holding the pages read so far: a rerun with the same range goes on at each list's cursor. */
  checkpoint: string;
  /** After each page: the list being read and the objects read so far (earlier runs' too). */
  onProgress?: (progress: { kind: string; total: number }) => void;
  /** ms before the n-th resume in a row after a rate limit (1-based), at least the API's hint; default 1 s doubling to 32 s. */
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
const idSchema = z.object({ id: z.union([z.string(), z.number()]) });

/** What has been read: the facts in the order read, each list's cursor, the objects whose mapping refused them. */
function history<K extends string>(source: HistorySource<K>) {
  const facts: ProviderFacts[] = [];
  const cursors = new Map<string, string | null>();
  const invalid: string[] = [];
  let objects = 0;
  return {
    /** Maps a page as it is read: only its facts stay in memory, not its objects. */
    add(kind: K, page: HistoryPage) {
      for (const object of page.objects) {
        objects++;
        try {
          facts.push(...source.facts(kind, object));
        } catch (error) {
          if (!(error instanceof WebhookPayloadError)) throw error;
          const id = idSchema.safeParse(object);
          invalid.push(`${kind} ${id.success ? id.data.id : '?'}: ${error.eventType}: ${error.detail}`);
        }
      }
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
  const backoff = options.backoffMs ?? ((n: number) => Math.min(32_000, 1000 * 2 ** (n - 1)));
  for (const kind of source.kinds) {
    for (let resumes = 0; read.cursor(kind) !== null;) {
      let page: HistoryPage;
      try {
        page = await source.page(kind, read.cursor(kind) ?? null, range);
      } catch (error) {
        const hint = source.retryAfterMs(error);
        if (hint === null || ++resumes > RATE_LIMIT_RESUMES) throw error;
        await sleep(Math.max(hint, backoff(resumes)));
        continue;
      }
      resumes = 0;
      await appendFile(options.checkpoint, `${JSON.stringify({ kind, objects: page.objects, next: page.next })}\n`);
      read.add(kind, page);
      options.onProgress?.({ kind, total: read.objects() });
    }
  }
  return read.result();
}

/** Whether a time (ms since epoch, null: unknown) falls within `range` (Unix seconds); an unknown time is kept. */
export function withinRange(ms: number | null, range: HistoryRange): boolean {
  if (ms === null) return true;
  return (range.since === null || ms >= range.since * 1000) && (range.until === null || ms < range.until * 1000);
}
