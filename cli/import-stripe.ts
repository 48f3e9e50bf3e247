import { createReadStream } from 'node:fs';
import { appendFile, mkdir, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { Stripe } from 'stripe';
import * as z from 'zod';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import {
  STRIPE_HISTORY_KINDS,
  stripeHistoryFacts,
  type StripeHistoryKind,
} from '../lambdas/domain/payments/import-stripe.js';
import { WebhookPayloadError } from '../lambdas/domain/payments/providers/index.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { importFacts, importSite } from './import-facts.js';
import { contextOf, parseArgs } from './main.js';
import { rebuildProgressPrinter } from './progress.js';
import { withStore } from './store.js';

/** Objects per list page: the most the Stripe API returns (https://docs.stripe.com/api/pagination). */
const PAGE = 100;
/** Times one list is resumed after a rate-limit answer the SDK's own retries did not absorb. */
const RATE_LIMIT_RESUMES = 8;

export interface StripeHistoryOptions {
  /** Unix seconds: only objects created at or after / before (the list endpoints' `created[gte]`, `created[lt]`). */
  since?: number;
  until?: number;
  /** A JSON-lines file holding what was read so far: a rerun resumes each list after its last object. */
  checkpoint: string;
  /** Objects read between two writes of the checkpoint; default 100 (a page of the API). */
  checkpointEvery?: number;
  /** After each page: the list being read and the objects read so far (earlier runs' too). */
  onProgress?: (progress: { kind: StripeHistoryKind; total: number }) => void;
  /** ms before the n-th resume after a rate limit (1-based); default 1 s doubling to 32 s. */
  backoffMs?: (attempt: number) => number;
}

export interface StripeHistory {
  facts: ProviderFacts[];
  /** Objects read, this run and earlier runs of the same checkpoint. */
  objects: number;
  /** Objects whose state a webhook mapping refused (the message names the event type). */
  invalid: string[];
}

/** Each kind's list call (the `stripe` package's auto-pagination takes `starting_after` as the cursor). */
const LISTS: Readonly<
  Record<
    StripeHistoryKind,
    (
      stripe: Stripe,
      params: Stripe.PaginationParams & { created?: Stripe.RangeQueryParam },
    ) => AsyncIterable<{ id: string }>
  >
> = {
  customer: (s, p) => s.customers.list(p),
  subscription: (s, p) => s.subscriptions.list({ ...p, status: 'all' }),
  checkout_session: (s, p) => s.checkout.sessions.list(p),
  payment_intent: (s, p) => s.paymentIntents.list(p),
  invoice: (s, p) => s.invoices.list(p),
  invoice_payment: (s, p) => s.invoicePayments.list({ ...p, status: 'paid' }),
  charge: (s, p) => s.charges.list(p),
};

const lineSchema = z.union([
  z.object({ range: z.object({ since: z.number().nullable(), until: z.number().nullable() }) }),
  z.object({ kind: z.enum(STRIPE_HISTORY_KINDS), done: z.literal(true) }),
  z.object({ kind: z.enum(STRIPE_HISTORY_KINDS), object: z.object({ id: z.string() }).passthrough() }),
]);

/** What has been read: each kind's facts in the order read, its last object, the objects whose mapping refused them. */
function history() {
  const facts = new Map<StripeHistoryKind, ProviderFacts[]>(STRIPE_HISTORY_KINDS.map((k) => [k, []]));
  const last = new Map<StripeHistoryKind, string>();
  const invalid: string[] = [];
  let objects = 0;
  return {
    /** Maps an object as it is read: only its facts stay in memory, not the object. */
    add(kind: StripeHistoryKind, object: { id: string }) {
      objects++;
      last.set(kind, object.id);
      try {
        facts.get(kind)!.push(...stripeHistoryFacts(kind, object));
      } catch (error) {
        if (!(error instanceof WebhookPayloadError)) throw error;
        invalid.push(`${kind} ${object.id}: ${error.eventType}: ${error.detail}`);
      }
    },
    last: (kind: StripeHistoryKind) => last.get(kind),
    objects: () => objects,
    result: (): StripeHistory => ({
      facts: STRIPE_HISTORY_KINDS.flatMap((k) => facts.get(k)!),
      objects,
      invalid,
    }),
  };
}

/**
 * Reads a checkpoint file a line at a time (it holds every object read, far more than their facts): its
 * range, each object into `read`, the kinds read to the end. A line cut short by a crash is the last
 * one, and what it held is read again from the API.
 */
async function readCheckpoint(path: string, read: ReturnType<typeof history>) {
  const done = new Set<StripeHistoryKind>();
  let range: { since: number | null; until: number | null } | null = null;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const parsed = line ? lineSchema.safeParse(safeJson(line)) : null;
      if (!parsed?.success) continue;
      const entry = parsed.data;
      if ('range' in entry) range = entry.range;
      else if ('done' in entry) done.add(entry.kind);
      else read.add(entry.kind, entry.object);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return { range, done };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * Reads a Stripe account's history (`footfall import stripe`): every list of
 * `STRIPE_HISTORY_KINDS` through the `stripe` package's auto-pagination, 100
 * objects a page, within the created range, each object appended to the
 * checkpoint file and mapped to the facts its webhooks would have carried
 * (`stripeHistoryFacts`) as it arrives; memory holds the facts, not the objects. Resumable: a rerun with the same
 * checkpoint and range reads each unfinished list on after its last object
 * (`starting_after`); a different range starts over. Rate limits: the
 * client's own retries (`maxNetworkRetries`), then the list resumes from its
 * last object after a pause (`backoffMs`), up to 8 times in a row.
 * @throws Stripe.errors.StripeError for an answer other than a rate limit (a key without read access: StripePermissionError)
 */
export async function readStripeHistory(stripe: Stripe, options: StripeHistoryOptions): Promise<StripeHistory> {
  const range = { since: options.since ?? null, until: options.until ?? null };
  let read = history();
  let saved = await readCheckpoint(options.checkpoint, read);
  if (!saved.range || saved.range.since !== range.since || saved.range.until !== range.until) {
    await rm(options.checkpoint, { force: true });
    await appendFile(options.checkpoint, `${JSON.stringify({ range })}\n`);
    read = history();
    saved = { range, done: new Set() };
  }
  const backoff = options.backoffMs ?? ((n: number) => Math.min(32_000, 1000 * 2 ** (n - 1)));
  const created: Stripe.RangeQueryParam = {
    ...(range.since !== null ? { gte: range.since } : {}),
    ...(range.until !== null ? { lt: range.until } : {}),
  };
  for (const kind of STRIPE_HISTORY_KINDS) {
    if (saved.done.has(kind)) continue;
    // Objects read and not yet in the file: written a page at a time, and kept across a resume.
    let lines: string[] = [];
    for (let resumes = 0; ;) {
      const cursor = read.last(kind);
      try {
        const list = LISTS[kind](stripe, {
          limit: PAGE,
          ...(Object.keys(created).length > 0 ? { created } : {}),
          ...(cursor ? { starting_after: cursor } : {}),
        });
        for await (const object of list) {
          read.add(kind, object);
          lines.push(JSON.stringify({ kind, object }));
          resumes = 0;
          if (lines.length >= (options.checkpointEvery ?? PAGE)) {
            await appendFile(options.checkpoint, `${lines.join('\n')}\n`);
            lines = [];
            options.onProgress?.({ kind, total: read.objects() });
          }
        }
        await appendFile(options.checkpoint, `${[...lines, JSON.stringify({ kind, done: true })].join('\n')}\n`);
        options.onProgress?.({ kind, total: read.objects() });
        break;
      } catch (error) {
        if (!(error instanceof Stripe.errors.StripeRateLimitError) || ++resumes > RATE_LIMIT_RESUMES) throw error;
        await sleep(backoff(resumes));
      }
    }
  }
  return read.result();
}

/** A day (`YYYY-MM-DD`, UTC) as Unix seconds at its start. */
const daySchema = z.iso.date().transform((d) => Date.parse(`${d}T00:00:00Z`) / 1000);

/**
 * An API key that can read the lists: a restricted key (`rk_…`, read access to
 * the resources `docs/payments.md` lists) or a secret key (`sk_…`, not
 * advised: it can write). https://docs.stripe.com/keys#limit-access
 */
const apiKeySchema = z
  .string()
  .refine((k) => /^(rk|sk)_(test|live)_\w+$/.test(k), 'expected a Stripe restricted key rk_live_… (or rk_test_…)');

/** Retries the `stripe` client makes of one request (rate limits it is told to retry, 409, 5xx, lost connections). */
const CLIENT_RETRIES = 5;

/**
 * `import stripe --site <d> --api-key <rk_…> [--since <day>] [--until <day>]`:
 * the account's history (`readStripeHistory`) through the bulk import. The key
 * can come from STRIPE_API_KEY instead (not on the command line, not in the
 * shell's history). `FOOTFALL_STRIPE_API` points the client at a stand-in of
 * the API (`http://host:port`, tests).
 */
export function registerStripeImport(imports: Command): void {
  imports
    .command('stripe')
    .description("import a Stripe account's payments, customers and subscriptions through its API (read-only key)")
    .requiredOption('--site <domain>', 'the site the payments belong to')
    .option('--api-key <key>', 'a restricted read-only key rk_… (default: STRIPE_API_KEY)')
    .option('--since <day>', 'only objects created on or after this day (YYYY-MM-DD, UTC)')
    .option('--until <day>', 'only objects created before this day (YYYY-MM-DD, UTC)')
    .action(async (opts: { site: string; apiKey?: string; since?: string; until?: string }, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, opts.site, '--site');
      const apiKey = parseArgs(apiKeySchema, opts.apiKey ?? process.env.STRIPE_API_KEY, '--api-key');
      const since = opts.since === undefined ? undefined : parseArgs(daySchema, opts.since, '--since');
      const until = opts.until === undefined ? undefined : parseArgs(daySchema, opts.until, '--until');
      const api = process.env.FOOTFALL_STRIPE_API ? new URL(process.env.FOOTFALL_STRIPE_API) : null;
      const stripe = new Stripe(apiKey, {
        maxNetworkRetries: CLIENT_RETRIES,
        ...(api ? { host: api.hostname, port: api.port, protocol: api.protocol === 'http:' ? 'http' : 'https' } : {}),
      });
      const printer = rebuildProgressPrinter(process.stderr, process.stderr.isTTY === true);
      const onProgress = ctx.json ? undefined : printer;
      const summary = await withStore(ctx, async (dynamo) => {
        const site = await importSite(dynamo, domain);
        const dir = join(ctx.dataDir, 'imports');
        await mkdir(dir, { recursive: true });
        const checkpoint = join(dir, `stripe-${domain}.jsonl`);
        try {
          const history = await readStripeHistory(stripe, {
            since,
            until,
            checkpoint,
            onProgress: ({ total }) =>
              onProgress?.({ phase: 'reading stripe', done: total, total: null, fraction: null }),
          });
          const payments = await importFacts(dynamo, site, history.facts, onProgress);
          // Imported: a rerun reads the API again rather than an old copy.
          await rm(checkpoint, { force: true });
          return {
            objects: history.objects,
            payments,
            invalid: history.invalid.length,
            errors: history.invalid.slice(0, 20),
          };
        } finally {
          printer.finish();
        }
      });
      if (ctx.json) return ctx.printJson(summary);
      ctx.print(
        `read ${summary.objects} Stripe objects: ${summary.payments} payments imported, ${summary.invalid} not read`,
      );
      for (const e of summary.errors) ctx.print(`  ${e}`);
    });
}
