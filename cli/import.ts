import { Command } from 'commander';
import { CountryDatabase } from '../lambdas/adapters/country-database.js';
import { countryDatabasePath } from '../local/geo.js';
import { ImportLineError } from '../lambdas/domain/import-line.js';
import { importEventLines, type ImportSummary } from '../local/import-events.js';
import { localPaths } from '../local/service.js';
import { localImportedIds } from '../local/imported-ids.js';
import { archivePoller, sessionizePoller } from '../local/consumers.js';
import { contextOf, parseArgs } from './main.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { localOnly, withLocalStore, withStore } from './store.js';
import { parsePaymentLine } from '../lambdas/domain/payments/import-line.js';
import { BULK_IMPORT_STORE, importFacts, importSite } from './import-facts.js';
import { registerHistoryImports } from './import-history.js';
import { registerPlausibleImport } from './import-plausible.js';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import { rebuildProgressPrinter } from './progress.js';
import { openLines } from './lines.js';

/** Errors listed in the summary; the rest are only counted. */
const MAX_LISTED_ERRORS = 20;

type EventImportSummary = ImportSummary & { sessionized: number | null };

/** One progress line on a terminal: a bar when the size is known (a file), else the count (standard input). */
function progress(done: number, total: number | null, lines: number): void {
  if (total === null) {
    process.stderr.write(`\r${lines} lines`);
    return;
  }
  const width = 30;
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round((done / Math.max(total, 1)) * 100)}%  ${lines} lines`,
  );
}

/** `import events <file.jsonl> [--site]`: historic events through the same validation and enrichment. */
export function registerImportCommands(program: Command): void {
  const imports = program.command('import').description('import historic data');
  registerPaymentImport(imports);
  registerHistoryImports(imports);
  registerPlausibleImport(imports);
  imports
    .command('events <file>')
    .description(
      'import events from a JSON-lines file, or standard input with - (inbound fields plus ts, ua, ip, country, language)',
    )
    .option('--site <domain>', 'the site of every line (fills a missing s; other sites are errors)')
    .action(async (file: string, opts: { site?: string }, command: Command) => {
      const ctx = contextOf(command);
      const site = opts.site === undefined ? undefined : parseArgs(domainSchema, opts.site, '--site');
      const source = await openLines(file);
      localOnly(ctx, 'import events');
      const summary = await withLocalStore(ctx.dataDir, async (dynamo, owner) => {
        const tty = process.stderr.isTTY && !ctx.json;
        const paths = localPaths(ctx.dataDir);
        const imported = await importEventLines(dynamo, paths.stream, source.lines, {
          site,
          now: Date.now(),
          countries: CountryDatabase.open(countryDatabasePath(ctx.dataDir)),
          known: (domain) => localImportedIds(paths, domain),
          onLine: (n) => {
            if (tty && n % 1000 === 0) progress(source.bytesRead(), source.size, n);
          },
        });
        if (tty) {
          progress(source.bytesRead(), source.size, imported.lines);
          process.stderr.write('\n');
        }
        const result: EventImportSummary = { ...imported, sessionized: null };
        // With no server running, nothing else would sessionize the import: do it now.
        if (owner) {
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
      const dropped =
        Object.entries(summary.dropped)
          .map(([r, n]) => `${r} ${n}`)
          .join(', ') || 'none';
      ctx.print(
        `read ${summary.lines} lines: ${summary.accepted} accepted, ${summary.already_imported} already imported (skipped), ${summary.invalid} invalid, dropped: ${dropped}`,
      );
      for (const e of summary.errors) ctx.print(`  ${e}`);
      if (summary.invalid > summary.errors.length) ctx.print(`  … and ${summary.invalid - summary.errors.length} more`);
      ctx.print(
        summary.sessionized === null
          ? 'the running server sessionizes them within seconds'
          : `sessionized ${summary.sessionized} records`,
      );
    });
}

/** `import payments <file.jsonl>`: historic payments with the merging, crediting and idempotency of webhooks, in bulk (`importPayments`). */
export function registerPaymentImport(imports: Command): void {
  imports
    .command('payments <file>')
    .description(
      'import payments from a JSON-lines file, or standard input with - (provider, provider_payment_id, ts, amount, currency, refunded, status, customer_id, visitor_id, is_renewal, subscription_id, subscription_status)',
    )
    .requiredOption('--site <domain>', 'the site the payments belong to')
    .action(async (file: string, opts: { site: string }, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, opts.site, '--site');
      const source = await openLines(file);
      // Progress on stderr as `rebuild` shows it: in place on a terminal, plain lines elsewhere; none with --json.
      const printer = rebuildProgressPrinter(process.stderr, process.stderr.isTTY === true);
      const onProgress = ctx.json ? undefined : printer;
      const summary = await withStore(
        ctx,
        async (dynamo) => {
          const site = await importSite(dynamo, domain);
          const result = { lines: 0, imported: 0, invalid: 0, errors: [] as string[], payments: 0 };
          const facts: ProviderFacts[] = [];
          const reading = () =>
            onProgress?.({
              phase: 'reading payments',
              done: result.lines,
              total: null,
              fraction: source.size ? source.bytesRead() / source.size : null,
            });
          for await (const text of source.lines) {
            result.lines++;
            if (result.lines % 10_000 === 0) reading();
            if (!text.trim()) continue;
            try {
              facts.push(parsePaymentLine(text, result.lines));
              result.imported++;
            } catch (error) {
              if (!(error instanceof ImportLineError)) throw error;
              result.invalid++;
              if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push(error.message);
            }
          }
          reading();
          try {
            result.payments = await importFacts(dynamo, site, facts, onProgress);
          } finally {
            printer.finish();
          }
          return result;
        },
        BULK_IMPORT_STORE,
      );
      if (ctx.json) return ctx.printJson(summary);
      ctx.print(
        `read ${summary.lines} lines: ${summary.imported} payment lines imported (${summary.payments} payments), ${summary.invalid} invalid`,
      );
      for (const e of summary.errors) ctx.print(`  ${e}`);
    });
}
