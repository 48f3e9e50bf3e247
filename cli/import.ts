import { Command } from 'commander';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { LocalEventStream } from '../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { CachedSiteDirectory } from '../lambdas/adapters/cached-site-directory.js';
import { SiteRateLimiter } from '../lambdas/domain/rate-limit.js';
import { newSalt } from '../lambdas/domain/visitor.js';
import { ImportLineError, parseImportLine } from '../lambdas/domain/import-line.js';
import { enrichAll } from '../lambdas/services/ingest.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { DropReason } from '../lambdas/domain/enrich.js';
import type { SaltStore } from '../lambdas/ports.js';
import { localPaths } from '../local/service.js';
import { archivePoller, sessionizePoller } from '../local/consumers.js';
import { contextOf, parseArgs } from './main.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { withLocalStore } from './store.js';
import { parsePaymentLine } from '../lambdas/domain/payments/import-line.js';
import { applyProviderFacts } from '../lambdas/services/payments.js';
import { dynamoPaymentDeps } from '../lambdas/adapters/dynamo/payment-deps.js';

/** Events written to the stream per put. */
const CHUNK = 500;
/** Errors listed in the summary; the rest are only counted. */
const MAX_LISTED_ERRORS = 20;

/**
 * Salts for historic events: one random salt per day, kept in memory for this
 * import only. The live salts of past days are deleted by design, so a
 * visitor without `v` in an import is only recognised within the import.
 */
class ImportSalts implements SaltStore {
  private readonly salts = new Map<string, string>();
  async saltFor(day: string): Promise<string> {
    let salt = this.salts.get(day);
    if (!salt) this.salts.set(day, (salt = newSalt()));
    return salt;
  }
}

export interface ImportSummary {
  lines: number;
  accepted: number;
  dropped: Partial<Record<DropReason, number>>;
  invalid: number;
  errors: string[];
  sessionized: number | null;
}

function progress(done: number, total: number, lines: number): void {
  const width = 30;
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round((done / Math.max(total, 1)) * 100)}%  ${lines} lines`);
}

/** `import events <file.jsonl> [--site]`: historic events through the same validation and enrichment. */
export function registerImportCommands(program: Command): void {
  const imports = program.command('import').description('import historic data');
  registerPaymentImport(imports);
  imports
    .command('events <file>')
    .description('import events from a JSON-lines file (inbound fields plus ts, ua, ip, country, language)')
    .option('--site <domain>', 'the site of every line (fills a missing s; other sites are errors)')
    .action(async (file: string, opts: { site?: string }, command: Command) => {
      const ctx = contextOf(command);
      const site = opts.site === undefined ? undefined : parseArgs(domainSchema, opts.site);
      const size = (await stat(file).catch(() => null))?.size;
      if (size === undefined) throw new Error(`cannot read ${file}`);
      const summary = await withLocalStore(ctx.dataDir, async (dynamo, owner) => {
        const stream = await LocalEventStream.open(localPaths(ctx.dataDir).stream);
        const deps = {
          sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo), 60_000),
          salts: new ImportSalts(),
          stream,
          limiter: new SiteRateLimiter(),
        };
        const result: ImportSummary = { lines: 0, accepted: 0, dropped: {}, invalid: 0, errors: [], sessionized: null };
        const tty = process.stderr.isTTY && !ctx.json;
        const input = createReadStream(file);
        let pending: TrackedEvent[] = [];
        const flush = async () => {
          if (pending.length > 0) await stream.put(pending);
          pending = [];
        };
        for await (const text of createInterface({ input, crlfDelay: Infinity })) {
          result.lines++;
          if (!text.trim()) continue;
          try {
            const { event, request } = parseImportLine(text, result.lines, site);
            const outcome = await enrichAll(deps, [event], request, { rateLimit: false });
            pending.push(...outcome.accepted);
            result.accepted += outcome.accepted.length;
            for (const [reason, n] of Object.entries(outcome.dropped)) result.dropped[reason as DropReason] = (result.dropped[reason as DropReason] ?? 0) + n;
          } catch (error) {
            if (!(error instanceof ImportLineError)) throw error;
            result.invalid++;
            if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push(error.message);
          }
          if (pending.length >= CHUNK) await flush();
          if (tty && result.lines % 1000 === 0) progress(input.bytesRead, size, result.lines);
        }
        await flush();
        await stream.close();
        if (tty) {
          progress(size, size, result.lines);
          process.stderr.write('\n');
        }
        // With no server running, nothing else would sessionize the import: do it now.
        if (owner) {
          const paths = localPaths(ctx.dataDir);
          result.sessionized = await sessionizePoller(paths.stream, dynamo).drain();
          const archive = archivePoller(paths.stream, paths.archive);
          await archive.poller.drain().finally(() => archive.close());
        }
        return result;
      });
      if (ctx.json) {
        ctx.printJson(summary);
        return;
      }
      const dropped = Object.entries(summary.dropped).map(([r, n]) => `${r} ${n}`).join(', ') || 'none';
      ctx.print(`read ${summary.lines} lines: ${summary.accepted} accepted, ${summary.invalid} invalid, dropped: ${dropped}`);
      for (const e of summary.errors) ctx.print(`  ${e}`);
      if (summary.invalid > summary.errors.length) ctx.print(`  … and ${summary.invalid - summary.errors.length} more`);
      ctx.print(summary.sessionized === null ? 'the running server sessionizes them within seconds' : `sessionized ${summary.sessionized} records`);
    });
}

/** `import payments <file.jsonl>`: historic payments through the same merging, crediting and idempotency as webhooks. */
export function registerPaymentImport(imports: Command): void {
  imports
    .command('payments <file>')
    .description('import payments from a JSON-lines file (provider, provider_payment_id, ts, amount, currency, refunded, status, customer_id, visitor_id, is_renewal, subscription_id, subscription_status)')
    .requiredOption('--site <domain>', 'the site the payments belong to')
    .action(async (file: string, opts: { site: string }, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, opts.site);
      if (!(await stat(file).catch(() => null))) throw new Error(`cannot read ${file}`);
      const summary = await withLocalStore(ctx.dataDir, async (dynamo) => {
        const site = await new DynamoConfigStore(dynamo).getSite(domain);
        if (!site) throw new Error(`site ${domain} does not exist`);
        const deps = dynamoPaymentDeps(dynamo);
        const result = { lines: 0, imported: 0, invalid: 0, errors: [] as string[] };
        for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
          result.lines++;
          if (!text.trim()) continue;
          try {
            await applyProviderFacts(deps, site, parsePaymentLine(text, result.lines));
            result.imported++;
          } catch (error) {
            if (!(error instanceof ImportLineError)) throw error;
            result.invalid++;
            if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push(error.message);
          }
        }
        return result;
      });
      if (ctx.json) return ctx.printJson(summary);
      ctx.print(`read ${summary.lines} lines: ${summary.imported} payments imported, ${summary.invalid} invalid`);
      for (const e of summary.errors) ctx.print(`  ${e}`);
    });
}
