import { Command } from 'commander';
import { localPaths } from '../local/service.js';
import { archivePoller, sessionizePoller } from '../local/consumers.js';
import * as z from 'zod';
import { UsageError, contextOf, parseArgs } from './main.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../lambdas/adapters/dynamo/payment-deps.js';
import { isValidDay, localDay } from '../lambdas/domain/range.js';
import { domainSchema, type SiteConfig } from '../lambdas/domain/site.js';
import { rebuildSite } from '../lambdas/services/rebuild.js';
import { DuckDbArchiveReader } from '../local/archive-reader.js';
import { runSql, sqlLiteral } from '../local/sql.js';
import { localOnly, withLocalStore } from './store.js';

/** `sessionize`: one pass of the sessionizer over the local stream, now. */
export function registerStreamCommands(program: Command): void {
  program
    .command('sessionize')
    .description('sessionize and archive everything on the local stream now (serve also does it every few seconds)')
    .action(async (_opts, command: Command) => {
      const ctx = contextOf(command);
      const paths = localPaths(ctx.dataDir);
      localOnly(ctx, 'sessionize');
      const result = await withLocalStore(ctx.dataDir, async (dynamo) => {
        const sessionized = await sessionizePoller(paths.stream, dynamo).drain();
        const archive = archivePoller(paths.stream, paths.archive);
        try {
          return { sessionized, archived: await archive.poller.drain() };
        } finally {
          await archive.close();
        }
      });
      if (ctx.json) ctx.printJson(result);
      else ctx.print(`sessionized ${result.sessionized} records, archived ${result.archived}`);
    });
}

/** `rebuild`: visits and rollups derived again from the Parquet archive (DuckDB locally). */
export function registerRebuildCommand(program: Command): void {
  program
    .command('rebuild')
    .description('derive visits and rollups again from the raw archive (e.g. after a channel rule changed)')
    .option('--site <domain>', 'only this site (default: every site)')
    .option('--from <day>', 'first local day (widened to its month); default: the first archived day')
    .option('--to <day>', 'last local day (widened to its month); default: today')
    .action(async (opts: { site?: string; from?: string; to?: string }, command: Command) => {
      const ctx = contextOf(command);
      const day = z.string().refine(isValidDay, 'must be a date YYYY-MM-DD');
      const from = opts.from === undefined ? undefined : parseArgs(day, opts.from, '--from');
      const to = opts.to === undefined ? undefined : parseArgs(day, opts.to, '--to');
      if (from && to && from > to) throw new UsageError(`--from "${from}" is not valid: must not be after --to "${to}"`);
      const domain = opts.site === undefined ? undefined : parseArgs(domainSchema, opts.site, '--site');
      const paths = localPaths(ctx.dataDir);
      localOnly(ctx, 'rebuild');
      const results = await withLocalStore(ctx.dataDir, async (dynamo) => {
        // What is on the stream but not yet archived or sessionized goes first.
        await sessionizePoller(paths.stream, dynamo).drain();
        const archive = archivePoller(paths.stream, paths.archive);
        await archive.poller.drain().finally(() => archive.close());
        const config = new DynamoConfigStore(dynamo);
        const sites = domain ? [await config.getSite(domain)] : await config.listSites();
        if (sites.some((s) => !s)) throw new Error(`site ${domain} does not exist`);
        const out = [];
        for (const site of sites as SiteConfig[]) {
          const first = (await runSql(paths.archive, `SELECT min(dt) AS d FROM events WHERE site = ${sqlLiteral(site.domain)}`)).rows[0]?.[0];
          if (!from && !first) continue;
          const deps = {
            archive: new DuckDbArchiveReader(paths.archive),
            clear: new DynamoRebuildStore(dynamo),
            sessionize: { sites: config, visits: new DynamoVisitStore(dynamo), rollups: new DynamoRollupStore(dynamo) },
            payments: dynamoPaymentDeps(dynamo),
          };
          out.push({ site: site.domain, ...(await rebuildSite(deps, site, from ?? String(first), to ?? localDay(Date.now(), site.timezone))) });
        }
        return out;
      });
      if (ctx.json) ctx.printJson(results);
      else for (const r of results) ctx.print(`${r.site}: ${r.from}..${r.to} rebuilt from ${r.events} events of ${r.visitors} visitors; ${r.recredited} payments credited again`);
    });
}
