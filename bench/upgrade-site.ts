import { cp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BENCH_SITE_DOMAIN, benchSiteRoot, filteredBenchOptions } from './filtered-site.js';
import { LocalVisitTable } from '../local/visit-table.js';

/**
 * Brings a copy of the filtered bench's cached site written in an older form of the visit table (before
 * `visitor_key` and each visit's pages once) to the current format, by the product's own upgrade
 * (`LocalVisitTable.upgradeOldForms`: each month file rewritten in the current form), in minutes instead of
 * generating the site again (`docs/benchmarks.md`):
 *
 *   FILTERED_VISITS_PER_MONTH=<n> node bin/run-ts.js bench/upgrade-site.ts <old cache directory>
 *
 * The old directory is copied to the cache directory of the current format (`benchSiteRoot`) and the copy
 * rewritten; the old one is only read. `FILTERED_VISITS_PER_MONTH` is the old site's (default 1,000,000),
 * as `npm run bench -- --only filtered` reads it.
 */
async function main(): Promise<void> {
  const from = process.argv[2];
  if (!from || !existsSync(from)) throw new Error('usage: bench/upgrade-site.ts <old cache directory>');
  const to = benchSiteRoot(filteredBenchOptions(Number(process.env.FILTERED_VISITS_PER_MONTH ?? 1_000_000)));
  if (resolve(from) === resolve(to)) throw new Error(`${from} is already the current format's cache`);
  const started = performance.now();
  await cp(from, to, { recursive: true, errorOnExist: true, force: false });
  const copied = performance.now();
  const table = new LocalVisitTable(to);
  try {
    const files = await table.upgradeOldForms(BENCH_SITE_DOMAIN);
    const done = performance.now();
    process.stdout.write(
      `${to}: copied in ${Math.round(copied - started)} ms, ${files.length} files rewritten in ${Math.round(done - copied)} ms\n`,
    );
  } finally {
    await table.close();
  }
}

await main();
