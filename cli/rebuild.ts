import { Command, Option } from 'commander';
import { AthenaClient } from '@aws-sdk/client-athena';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { contextOf, parseArgs, UsageError, type CliContext } from './main.js';
import { withLocalStore, withStore } from './store.js';
import { rebuildProgressPrinter } from './progress.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import { AthenaArchiveReader } from '../lambdas/adapters/athena-archive.js';
import { domainSchema, namespaceOf, type SiteConfig } from '../lambdas/domain/site.js';
import { abandonRebuild, rebuildSite, type RebuildDeps, type RebuildOutcome } from '../lambdas/services/rebuild.js';
import type { ArchiveReader } from '../lambdas/ports.js';
import { DuckDbArchiveReader } from '../local/archive-reader.js';
import { LOCAL_SITE_CACHE_TTL_MS, archivePoller, sessionizePoller } from '../local/consumers.js';
import { localPaths } from '../local/service.js';

// The deployed stack's waits, shared with the operations function (lambdas/entry/operations.ts).
export {
  AWS_DRAIN_MS,
  AWS_FENCE_MS,
  FIREHOSE_BUFFER_S,
  FIREHOSE_DELIVERY_S,
  SESSIONIZER_TIMEOUT_S,
} from '../lambdas/adapters/aws-fence.js';
import { AWS_DRAIN_MS, AWS_FENCE_MS } from '../lambdas/adapters/aws-fence.js';

const athenaName = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a name of letters, digits, _ or -');

interface RebuildOptions {
  site?: string;
  abandon?: boolean;
  dropBeforeArchive?: boolean;
  athenaWorkgroup?: string;
  glueDatabase?: string;
}

/** Where the archive is and how the fence and the drain are kept, local or deployed. */
export interface Mode {
  /** Brings the archive up to date before anything is compared with it. */
  prepare(): Promise<void>;
  archive: ArchiveReader;
  fence(): Promise<void>;
  drain(): Promise<void>;
}

/**
 * Local mode: the fence drains the local stream into the sessionizer and the
 * archive (so every event put before is archived), after the local cache TTL
 * when a `serve` shares the data directory; the drain waits out that TTL.
 */
export function localMode(ctx: CliContext, dynamo: DynamoConnection, serving: boolean): Mode {
  const paths = localPaths(ctx.dataDir);
  const wait = () => (serving ? sleep(LOCAL_SITE_CACHE_TTL_MS + 1000) : Promise.resolve());
  const catchUp = async () => {
    await sessionizePoller(paths.stream, dynamo).drain();
    const archive = archivePoller(paths.stream, paths.archive);
    await archive.poller.drain().finally(() => archive.close());
  };
  return {
    prepare: catchUp,
    archive: new DuckDbArchiveReader(paths.archive),
    fence: async () => {
      await wait();
      await catchUp();
    },
    drain: wait,
  };
}

/** `--aws` mode: the archive through Athena, the fence and drain waited out by the clock (Firehose delivers within `AWS_FENCE_MS`). */
export function awsMode(opts: Pick<RebuildOptions, 'athenaWorkgroup' | 'glueDatabase'>): Mode {
  if (!opts.athenaWorkgroup || !opts.glueDatabase)
    throw new UsageError(
      '--athena-workgroup and --glue-database: are required with --aws (the AthenaWorkGroup and GlueDatabase outputs of the stack)',
    );
  const workGroup = parseArgs(athenaName, opts.athenaWorkgroup, '--athena-workgroup');
  const database = parseArgs(athenaName, opts.glueDatabase, '--glue-database');
  return {
    // Firehose keeps the archive; what it still buffers is waited for by the fence.
    prepare: async () => undefined,
    archive: new AthenaArchiveReader(new AthenaClient({}), { workGroup, database }),
    fence: () => sleep(AWS_FENCE_MS),
    drain: () => sleep(AWS_DRAIN_MS),
  };
}

/** `--athena-workgroup` of the `--aws` commands that read the archive (a new Option per command). */
export const workgroupOption = () =>
  new Option('--athena-workgroup <name>', 'with --aws: the AthenaWorkGroup output of the stack').env(
    'FOOTFALL_ATHENA_WORKGROUP',
  );

/** `--glue-database` of the `--aws` commands that read the archive. */
export const databaseOption = () =>
  new Option('--glue-database <name>', 'with --aws: the GlueDatabase output of the stack').env(
    'FOOTFALL_GLUE_DATABASE',
  );

export function depsOf(dynamo: DynamoConnection, mode: Mode, onProgress: RebuildDeps['onProgress']): RebuildDeps {
  return {
    ...mode,
    sites: new DynamoConfigStore(dynamo),
    store: new DynamoRebuildStore(dynamo),
    visits: new DynamoVisitStore(dynamo),
    rollups: new DynamoRollupStore(dynamo),
    payments: dynamoPaymentDeps(dynamo),
    clock: Date.now,
    onProgress,
  };
}

function describe(r: RebuildOutcome): string {
  return (
    `${r.site}: generation ${r.generation} is live (replaced ${r.replaced}${r.resumed ? ', resumed' : ''}): ` +
    `${r.events} events from ${r.from ?? 'an empty archive'} to ${r.to} sessionized, ${r.payments} payments credited, ${r.deleted} items of the old generation deleted`
  );
}

/**
 * `rebuild`: derives every site's (or one site's) visits, rollups and payment
 * credits again from the raw archive into a new generation beside the live
 * data, and switches to it in one write (`docs/rebuild.md`). `--abandon`
 * gives up a rebuild that stopped; running `rebuild` again resumes it.
 */
export function registerRebuildCommand(program: Command): void {
  program
    .command('rebuild')
    .description(
      'derive visits, rollups and payment credits again from the raw archive into a new generation, then switch readers to it in one write (docs/rebuild.md)',
    )
    .option('--site <domain>', 'only this site (default: every site)')
    .option(
      '--abandon',
      'give up the rebuild a site is building (after a crash) and delete what it wrote; the live data is not touched',
    )
    .option(
      '--drop-before-archive',
      'rebuild even when the site has data older than the archive (raw retention): those days are dropped',
    )
    .addOption(workgroupOption())
    .addOption(databaseOption())
    .action(async (opts: RebuildOptions, command: Command) => {
      const ctx = contextOf(command);
      const domain = opts.site === undefined ? undefined : parseArgs(domainSchema, opts.site, '--site');
      const aws = ctx.aws ? awsMode(opts) : null;
      const tty = process.stderr.isTTY === true && !ctx.json;
      // Progress on stderr: rewritten in place on a terminal, plain lines elsewhere; none with --json.
      const printer = rebuildProgressPrinter(process.stderr, tty);
      const onProgress = ctx.json ? undefined : printer;
      const run = async (dynamo: DynamoConnection, serving: boolean) => {
        const mode = aws ?? localMode(ctx, dynamo, serving);
        await mode.prepare();
        const config = new DynamoConfigStore(dynamo);
        const sites = domain ? [await config.getSite(domain)] : await config.listSites();
        if (sites.some((s) => !s)) throw new UsageError(`--site: ${domain} is not a site (footfall sites list)`);
        const out: unknown[] = [];
        for (const site of sites as SiteConfig[]) {
          const deps = depsOf(dynamo, mode, onProgress);
          if (opts.abandon) {
            if (site.building === undefined && domain === undefined) continue;
            out.push(await abandonRebuild(deps, site.domain).finally(() => printer.finish()));
            continue;
          }
          const firstTrackedDay = await new DynamoRebuildStore(dynamo).firstVisitDay(namespaceOf(site));
          // A site with nothing tracked and nothing archived has nothing to rebuild (a rebuild that stopped is still finished).
          if (
            firstTrackedDay === null &&
            site.building === undefined &&
            (await mode.archive.firstDay(site.domain)) === null
          )
            continue;
          if (!tty && !ctx.json) ctx.print(`${site.domain}: rebuilding (live data: ${namespaceOf(site)})`);
          out.push(
            await rebuildSite(deps, site.domain, {
              firstTrackedDay,
              dropBeforeArchive: opts.dropBeforeArchive,
            }).finally(() => printer.finish()),
          );
        }
        return out;
      };
      const results = ctx.aws
        ? await withStore(ctx, (dynamo) => run(dynamo, false))
        : await withLocalStore(ctx.dataDir, (dynamo, owner) => run(dynamo, !owner));
      if (ctx.json) return ctx.printJson(results);
      for (const r of results) {
        if ('abandoned' in (r as object)) {
          const a = r as { site: string; abandoned: number; deleted: number };
          ctx.print(
            `${a.site}: rebuild of generation ${a.abandoned} abandoned, ${a.deleted} items deleted; the live data is unchanged`,
          );
        } else ctx.print(describe(r as RebuildOutcome));
      }
      if (results.length === 0) ctx.print(opts.abandon ? 'no rebuild is running' : 'no site to rebuild');
    });
}
