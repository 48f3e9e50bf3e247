import { Command, Option } from 'commander';
import { AthenaClient } from '@aws-sdk/client-athena';
import { S3Client } from '@aws-sdk/client-s3';
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { contextOf, parseArgs, UsageError, type CliContext } from './main.js';
import { withLocalStore, withStore } from './store.js';
import { rebuildProgressPrinter } from './progress.js';
import { AWS_FENCE_MS, databaseOption, localMode, workgroupOption } from './rebuild.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoSiteDeletionStore } from '../lambdas/adapters/dynamo/site-deletion-store.js';
import { AthenaArchiveReader } from '../lambdas/adapters/athena-archive.js';
import { S3ArchiveEraser } from '../lambdas/adapters/s3-archive-eraser.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { deleteSite, type SiteDeletionDeps, type SiteDeletionOutcome } from '../lambdas/services/site-deletion.js';
import { LocalArchiveEraser } from '../local/archive-eraser.js';
import { localPaths } from '../local/service.js';
import { EVENTS_PREFIX } from '../lib/archive.js';

const athenaName = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a name of letters, digits, _ or -');
const bucketName = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name');

/** The stack outputs `--aws` needs to reach the archive. */
export interface ArchiveOptions {
  athenaWorkgroup?: string;
  glueDatabase?: string;
  eventsBucket?: string;
}

interface DeleteOptions extends ArchiveOptions {
  yes?: boolean;
}

type ArchiveDeps = Pick<SiteDeletionDeps, 'archive' | 'eraser' | 'fence'>;

/**
 * The deployed archive of `--aws` (sites delete, erase): Athena over the Glue table to read it and
 * rewrite it, S3 to delete from it, and the fence that waits out Firehose's buffer.
 * @throws UsageError when one of the three stack outputs is missing or malformed
 */
export function awsArchive(opts: ArchiveOptions): ArchiveDeps {
  if (!opts.athenaWorkgroup || !opts.glueDatabase || !opts.eventsBucket)
    throw new UsageError(
      '--athena-workgroup, --glue-database and --events-bucket: are required with --aws (the AthenaWorkGroup, GlueDatabase and EventsBucket outputs of the stack)',
    );
  const workGroup = parseArgs(athenaName, opts.athenaWorkgroup, '--athena-workgroup');
  const database = parseArgs(athenaName, opts.glueDatabase, '--glue-database');
  const bucket = parseArgs(bucketName, opts.eventsBucket, '--events-bucket');
  const athena = new AthenaClient({});
  return {
    archive: new AthenaArchiveReader(athena, { workGroup, database }),
    eraser: new S3ArchiveEraser(
      new S3Client({}),
      { bucket, prefix: EVENTS_PREFIX },
      { client: athena, options: { workGroup, database } },
    ),
    // Counted from the SITE item's removal, so a resumed deletion does not wait again.
    fence: (begun) => sleep(Math.max(0, begun + AWS_FENCE_MS - Date.now())),
  };
}

function localArchive(ctx: CliContext, dynamo: DynamoConnection, serving: boolean): ArchiveDeps {
  const mode = localMode(ctx, dynamo, serving);
  return {
    archive: mode.archive,
    eraser: new LocalArchiveEraser(localPaths(ctx.dataDir).archive),
    fence: () => mode.fence(),
  };
}

/** The `--aws` archive options (`ArchiveOptions`), each with its environment variable. */
export function addArchiveOptions(command: Command): Command {
  return command
    .addOption(workgroupOption())
    .addOption(databaseOption())
    .addOption(
      new Option('--events-bucket <name>', 'with --aws: the EventsBucket output of the stack').env(
        'FOOTFALL_EVENTS_BUCKET',
      ),
    );
}

/** Asks for the domain on a terminal, after `warning`; anything else than the domain itself cancels. */
export async function confirmed(domain: string, warning: string): Promise<boolean> {
  if (!process.stdin.isTTY)
    throw new UsageError('--yes: is required when standard input is not a terminal (nothing to type the domain on)');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${warning}\nType the domain to confirm: `);
    return answer.trim().toLowerCase() === domain;
  } finally {
    rl.close();
  }
}

const describe = (r: SiteDeletionOutcome) =>
  `${r.site} deleted${r.resumed ? ' (resumed)' : ''}: ${r.deleted} items in ${r.generations} generation${r.generations === 1 ? '' : 's'} and ${r.archive_files} archive files`;

/**
 * `sites delete <domain>`: deletes a site and all its data (`docs/deploy.md`,
 * "Deleting a site"): resumable, with progress; `--yes` or the domain typed.
 */
export function registerSiteDeleteCommand(sites: Command): void {
  const command = sites
    .command('delete <domain>')
    .description(
      'delete a site and all its data: every generation, payments, provider connections, the archive (running it again resumes a deletion that stopped)',
    )
    .option('--yes', 'do not ask for the domain to be typed');
  addArchiveOptions(command).action(async (domainArg: string, opts: DeleteOptions, command: Command) => {
    const ctx = contextOf(command);
    const domain = parseArgs(domainSchema, domainArg, '<domain>');
    const aws = ctx.aws ? awsArchive(opts) : null;
    const warning = `This deletes ${domain} and all its data (visits, rollups, payments, archive), for good.`;
    if (!opts.yes && !(await confirmed(domain, warning)))
      throw new UsageError('<domain>: not confirmed; nothing deleted');
    const tty = process.stderr.isTTY === true && !ctx.json;
    const printer = rebuildProgressPrinter(process.stderr, tty);
    const run = async (dynamo: DynamoConnection, serving: boolean) => {
      const deps: SiteDeletionDeps = {
        ...(aws ?? localArchive(ctx, dynamo, serving)),
        sites: new DynamoConfigStore(dynamo),
        store: new DynamoSiteDeletionStore(dynamo),
        namespaces: new DynamoRebuildStore(dynamo),
        clock: Date.now,
        ...(ctx.json
          ? {}
          : { onProgress: (p) => printer({ phase: p.phase, done: p.done, total: null, fraction: null }) }),
      };
      return deleteSite(deps, domain).finally(() => printer.finish());
    };
    const outcome = ctx.aws
      ? await withStore(ctx, (dynamo) => run(dynamo, false))
      : await withLocalStore(ctx.dataDir, (dynamo, owner) => run(dynamo, !owner));
    if (ctx.json) ctx.printJson(outcome);
    else ctx.print(describe(outcome));
  });
}
