import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import * as z from 'zod';
import { PROVIDERS, type Provider } from '../lambdas/domain/payments/facts.js';
import { HISTORY_KEYS } from '../lambdas/domain/payments/history-keys.js';
import { historyApiOf, historySource } from '../lambdas/adapters/history/sources.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { readHistory } from './history.js';
import { BULK_IMPORT_STORE, importFacts, importSite } from './import-facts.js';
import { contextOf, parseArgs } from './main.js';
import { rebuildProgressPrinter } from './progress.js';
import { withStore } from './store.js';

/** Errors listed in the summary; the rest are only counted. */
const MAX_LISTED_ERRORS = 20;

/** What `footfall import <provider>` says besides `HISTORY_KEYS`: its description and the key's environment variable. */
const COMMANDS: Readonly<Record<Provider, { description: string; keyEnv: string }>> = {
  stripe: {
    description: "import a Stripe account's payments, customers and subscriptions through its API (read-only key)",
    keyEnv: 'STRIPE_API_KEY',
  },
  lemonsqueezy: {
    description: "import a Lemon Squeezy store's orders, subscription invoices and subscriptions through its API",
    keyEnv: 'LEMONSQUEEZY_API_KEY',
  },
  paddle: {
    description:
      "import a Paddle Billing account's transactions, refunds and subscriptions through its API (read-only key)",
    keyEnv: 'PADDLE_API_KEY',
  },
  polar: {
    description: "import a Polar organization's orders and subscriptions through its API (read-only token)",
    keyEnv: 'POLAR_ACCESS_TOKEN',
  },
};

/** A day (`YYYY-MM-DD`, UTC) as Unix seconds at its start. */
const daySchema = z.iso.date().transform((d) => Date.parse(`${d}T00:00:00Z`) / 1000);

/**
 * `import <provider> --site <d> --api-key <key> [--since <day>] [--until <day>]`:
 * the provider's history (`readHistory` over `historySource`) through the bulk
 * import, resumable from `<data dir>/imports/<provider>-<site>.jsonl`, which
 * is deleted once everything is written. The key can come from its environment variable
 * instead (not on the command line, not in the shell's history).
 */
export function registerHistoryImport(imports: Command, provider: Provider): void {
  const spec = { provider, ...HISTORY_KEYS[provider], ...COMMANDS[provider] };
  const command = imports
    .command(spec.provider)
    .description(spec.description)
    .requiredOption('--site <domain>', 'the site the payments belong to')
    .option('--api-key <key>', `${spec.keyHelp} (default: ${spec.keyEnv})`)
    .option('--since <day>', 'only objects created on or after this day (YYYY-MM-DD, UTC)')
    .option('--until <day>', 'only objects created before this day (YYYY-MM-DD, UTC)');
  if (spec.scope) command.option(`--${spec.scope.name} <id>`, spec.scope.description);
  command.action(async (opts: Record<string, string | undefined>, cmd: Command) => {
    const ctx = contextOf(cmd);
    const domain = parseArgs(domainSchema, opts.site, '--site');
    const apiKey = parseArgs(spec.keySchema, opts.apiKey ?? process.env[spec.keyEnv], '--api-key');
    const since = opts.since === undefined ? null : parseArgs(daySchema, opts.since, '--since');
    const until = opts.until === undefined ? null : parseArgs(daySchema, opts.until, '--until');
    const scope =
      spec.scope && opts[spec.scope.name] !== undefined
        ? parseArgs(spec.scope.schema, opts[spec.scope.name], `--${spec.scope.name}`)
        : undefined;
    const source = historySource(provider, apiKey, historyApiOf(provider, process.env), scope);
    const printer = rebuildProgressPrinter(process.stderr, process.stderr.isTTY === true);
    const onProgress = ctx.json ? undefined : printer;
    const summary = await withStore(
      ctx,
      async (dynamo) => {
        const site = await importSite(dynamo, domain);
        const dir = join(ctx.dataDir, 'imports');
        await mkdir(dir, { recursive: true });
        const checkpoint = join(dir, `${spec.provider}-${domain}.jsonl`);
        try {
          const history = await readHistory(source, {
            range: { since, until },
            checkpoint,
            onProgress: ({ total }) =>
              onProgress?.({ phase: `reading ${spec.provider}`, done: total, total: null, fraction: null }),
          });
          const payments = await importFacts(dynamo, site, history.facts, onProgress);
          // Imported: a rerun reads the API again rather than an old copy.
          await rm(checkpoint, { force: true });
          return {
            objects: history.objects,
            payments,
            invalid: history.invalid.length,
            errors: history.invalid.slice(0, MAX_LISTED_ERRORS),
          };
        } finally {
          printer.finish();
        }
      },
      BULK_IMPORT_STORE,
    );
    if (ctx.json) return ctx.printJson(summary);
    ctx.print(
      `read ${summary.objects} ${spec.label} objects: ${summary.payments} payments imported, ${summary.invalid} not read`,
    );
    for (const e of summary.errors) ctx.print(`  ${e}`);
  });
}

/** `import stripe|lemonsqueezy|paddle|polar`: each provider's history (`registerHistoryImport`). */
export function registerHistoryImports(imports: Command): void {
  for (const provider of PROVIDERS) registerHistoryImport(imports, provider);
}
