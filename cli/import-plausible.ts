import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { strFromU8, unzipSync } from 'fflate';
import * as z from 'zod';
import { DynamoImportedStore } from '../lambdas/adapters/dynamo/imported-store.js';
import { isValidDay } from '../lambdas/domain/range.js';
import { domainSchema } from '../lambdas/domain/site.js';
import {
  PlausibleImportError,
  importPlausible,
  type PlausibleImportSummary,
} from '../lambdas/services/plausible-import.js';
import { importSite } from './import-facts.js';
import { contextOf, parseArgs } from './main.js';
import { withStore } from './store.js';
import { UsageError } from './usage.js';

/** `--until`: a site-local day. */
const untilSchema = z.string().refine(isValidDay, 'must be a day YYYY-MM-DD');

/**
 * The entries of a Plausible export zip (fflate, MIT), each as UTF-8 text.
 * @throws UsageError when the file cannot be read or is no zip
 */
async function zipEntries(path: string): Promise<Array<{ name: string; text: string }>> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new UsageError(`${path}: ${(error as Error).message}`);
  }
  try {
    const entries = unzipSync(bytes);
    return Object.keys(entries)
      .sort()
      .map((name) => ({ name, text: strFromU8(entries[name]!) }));
  } catch (error) {
    throw new UsageError(`${path}: not a zip archive (${(error as Error).message})`);
  }
}

function printSummary(print: (text: string) => void, s: PlausibleImportSummary): void {
  print(
    `read ${s.rows.read} rows in ${s.files.length} files: ${s.rows.kept} kept, ${s.rows.skipped} skipped (on or after ${s.until}), ${s.rows.invalid} invalid`,
  );
  for (const f of s.files)
    print(`  ${f.file}: ${f.read} read, ${f.kept} kept, ${f.skipped} skipped, ${f.invalid} invalid`);
  if (s.ignored.length > 0) print(`  ignored (not a table of the export): ${s.ignored.join(', ')}`);
  for (const e of s.errors) print(`  ${e}`);
  if (s.rows.invalid > s.errors.length) print(`  … and ${s.rows.invalid - s.errors.length} more`);
  print(`imported ${s.from} to ${s.to} into ${s.site} (${s.items} items)`);
}

/** `import plausible`: a Plausible CSV export's daily aggregates for the days before the cut-over day, or `--remove`. */
export function registerPlausibleImport(imports: Command): void {
  imports
    .command('plausible [export]')
    .description(
      'import a Plausible CSV export (the zip of Site settings → Imports & Exports): its days before --until show beside tracked ones; rerun to replace, --remove to delete',
    )
    .requiredOption('--site <domain>', 'the site the export is imported into')
    .option('--until <YYYY-MM-DD>', "the cut-over day (site-local): only the export's days before it are imported")
    .option('--remove', "delete the site's imported days")
    .action(
      async (file: string | undefined, opts: { site: string; until?: string; remove?: boolean }, command: Command) => {
        const ctx = contextOf(command);
        const domain = parseArgs(domainSchema, opts.site, '--site');
        if (opts.remove && (file !== undefined || opts.until !== undefined))
          throw new UsageError('--remove: takes no export and no --until');
        if (!opts.remove && file === undefined) throw new UsageError('the export zip is required (or --remove)');
        if (!opts.remove && opts.until === undefined) throw new UsageError('--until: is required with an export');
        if (opts.remove || file === undefined) {
          const deleted = await withStore(ctx, async (dynamo) => {
            await importSite(dynamo, domain);
            return new DynamoImportedStore(dynamo).remove(domain);
          });
          if (ctx.json) return ctx.printJson({ site: domain, deleted });
          return ctx.print(`removed the imported days of ${domain} (${deleted} items)`);
        }
        const until = parseArgs(untilSchema, opts.until, '--until');
        const files = await zipEntries(file);
        const summary = await withStore(ctx, async (dynamo) => {
          const site = await importSite(dynamo, domain);
          try {
            return await importPlausible(new DynamoImportedStore(dynamo), site, files, until, Date.now());
          } catch (error) {
            if (error instanceof PlausibleImportError) throw new UsageError(error.message);
            throw error;
          }
        });
        if (ctx.json) return ctx.printJson(summary);
        printSummary(ctx.print, summary);
      },
    );
}
