import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { contextOf, parseArgs, UsageError, type CliContext } from './main.js';
import { withLocalStore, withStore } from './store.js';
import { AWS_DRAIN_MS, AWS_FENCE_MS, awsMode, depsOf, localMode } from './rebuild.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { dynamoOperationsDeps } from '../lambdas/wiring/operations-deps.js';
import { advanceOperations } from '../lambdas/services/operations.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { LOCAL_SITE_CACHE_TTL_MS } from '../local/consumers.js';
import { addArchiveOptions, awsArchive, confirmed, type ArchiveOptions } from './sites-delete.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import type { ArchiveEraser } from '../lambdas/ports.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoErasureStore } from '../lambdas/adapters/dynamo/erasure-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { domainSchema, namespaceOf, type SiteConfig } from '../lambdas/domain/site.js';
import { rebuildSite } from '../lambdas/services/rebuild.js';
import { erasePerson, erasureRequestSchema, type ErasureRequest } from '../lambdas/services/erasure.js';
import { LocalArchiveEraser } from '../local/archive-eraser.js';
import { localPaths } from '../local/service.js';

interface EraseOptions extends ArchiveOptions {
  site?: string;
  pending?: boolean;
  visitor?: string;
  customer?: string;
  email?: string;
  yes?: boolean;
}

function requestOf(opts: EraseOptions): ErasureRequest {
  if (opts.email !== undefined)
    throw new UsageError(
      '--email: Footfall stores no email addresses (payments keep the provider customer id): find the customer id at the provider and pass --customer',
    );
  const given = [opts.visitor, opts.customer].filter((v) => v !== undefined);
  if (given.length !== 1) throw new UsageError('one of --visitor <id> or --customer <id> is required');
  return opts.visitor !== undefined
    ? parseArgs(erasureRequestSchema, { kind: 'visitor', id: opts.visitor }, '--visitor')
    : parseArgs(erasureRequestSchema, { kind: 'customer', id: opts.customer }, '--customer');
}

/**
 * `eraser` whose archive rewrite first waits for `fence`: in AWS, events the person sent before the
 * erasure may still be in Firehose's buffer, and would land in the archive after its rewrite.
 */
function fencedEraser(eraser: ArchiveEraser, fence: () => Promise<void>): ArchiveEraser {
  return {
    deleteSite: (site) => eraser.deleteSite(site),
    eraseVisitors: async (site, visitors) => {
      await fence();
      return eraser.eraseVisitors(site, visitors);
    },
  };
}

/** How long one pass of `--pending` may advance the queue before it looks again, ms. */
const PASS_MS = 60_000;
/** The pause between passes while every request waits for a fence, ms. */
const IDLE_MS = 30_000;

/**
 * `erase --pending`: carries out the erasures queued in the app and the site
 * deletions begun there, with the operator's credentials, until none is
 * left: the same driver as the operations function (`advanceOperations`),
 * to finish sooner than its 15-minute schedule or on a stack deployed
 * without it (`docs/security.md`, "Erasing a person").
 */
async function runPending(ctx: CliContext, opts: EraseOptions): Promise<{ erasures: number; deletions: number }> {
  const aws = ctx.aws ? { archive: awsArchive(opts), mode: awsMode(opts) } : null;
  const run = async (dynamo: DynamoConnection, serving: boolean) => {
    const mode = aws?.mode ?? localMode(ctx, dynamo, serving);
    await mode.prepare();
    const localWait = serving ? LOCAL_SITE_CACHE_TTL_MS + 1000 : 0;
    const deps = dynamoOperationsDeps(dynamo, {
      archive: mode.archive,
      eraser: aws ? aws.archive.eraser : new LocalArchiveEraser(localPaths(ctx.dataDir).archive),
      fenceMs: aws ? AWS_FENCE_MS : localWait,
      drainMs: aws ? AWS_DRAIN_MS : localWait,
      catchUp: () => mode.prepare(),
      clock: Date.now,
      logger: createTelemetry('footfall-cli').logger,
    });
    const total = { erasures: 0, deletions: 0 };
    const queue = new DynamoErasureStore(dynamo);
    for (;;) {
      const left = (await queue.pending()).length + (await deps.deletions.store.pending()).length;
      if (left === 0) return total;
      const done = await advanceOperations(deps, Date.now() + PASS_MS);
      total.erasures += done.erasures;
      total.deletions += done.deletions;
      if (done.erasures + done.deletions === 0) {
        if (!ctx.json) process.stderr.write(`${left} queued; waiting for a fence or a step to pass\n`);
        await sleep(IDLE_MS);
      }
    }
  };
  return ctx.aws
    ? withStore(ctx, (dynamo) => run(dynamo, false))
    : withLocalStore(ctx.dataDir, (dynamo, owner) => run(dynamo, !owner));
}

/**
 * `erase`: erases a person from a site (GDPR Art. 17, CCPA;
 * `docs/security.md`, "Erasing a person"): their visits and timelines, their
 * ids on payments, their events in the archive, then a rebuild so that no
 * report holds them; an audit record with counts only. With `--aws`, the
 * archive's S3 objects are rewritten through Athena after Firehose's delivery
 * fence, and the rebuild reads the archive through Athena.
 */
export function registerEraseCommand(program: Command): void {
  const command = program
    .command('erase')
    .description(
      "erase a person from a site (GDPR Art. 17, CCPA): visits, timelines, ids on payments, archived events; reports are rebuilt and keep the payments' money (docs/security.md)",
    )
    .option('--site <domain>', 'the site')
    .option('--visitor <id>', 'the visitor id (footfall.visitorId() in the browser, visitor_id in the archive)')
    .option('--customer <id>', "the payment provider's customer id (e.g. Stripe cus_…)")
    .option('--email <address>', 'not stored by Footfall: explains how to find the customer id instead')
    .option('--yes', 'do not ask for the domain to be typed')
    .option(
      '--pending',
      'carry out the erasures queued in the app (Site settings › Erase a person) and the site deletions begun there, until none is left',
    );
  addArchiveOptions(command).action(async (opts: EraseOptions, command: Command) => {
    const ctx = contextOf(command);
    if (opts.pending) {
      const done = await runPending(ctx, opts);
      if (ctx.json) return ctx.printJson(done);
      return ctx.print(`${done.erasures} erasures and ${done.deletions} site deletions finished; none is queued`);
    }
    if (opts.site === undefined) throw new UsageError('--site <domain>: is required (or --pending)');
    const domain = parseArgs(domainSchema, opts.site, '--site');
    const request = requestOf(opts);
    const aws = ctx.aws ? { archive: awsArchive(opts), mode: awsMode(opts) } : null;
    if (
      !opts.yes &&
      !(await confirmed(domain, `This erases the ${request.kind} from ${domain} and rebuilds its reports.`))
    )
      throw new UsageError('--site: not confirmed; nothing erased');
    const run = async (dynamo: DynamoConnection, serving: boolean) => {
      const mode = aws?.mode ?? localMode(ctx, dynamo, serving);
      await mode.prepare();
      const config = new DynamoConfigStore(dynamo);
      const archive = aws
        ? fencedEraser(aws.archive.eraser, async () => {
            if (!ctx.json)
              process.stderr.write(
                `waiting ${Math.ceil(AWS_FENCE_MS / 60_000)} minutes for events still buffered by Firehose to reach the archive, then rewriting it through Athena\n`,
              );
            await aws.archive.fence(Date.now());
          })
        : new LocalArchiveEraser(localPaths(ctx.dataDir).archive);
      return erasePerson(
        {
          sites: config,
          store: new DynamoErasureStore(dynamo),
          archive,
          rebuild: async (d) => {
            const site = (await config.getSite(d)) as SiteConfig;
            const firstTrackedDay = await new DynamoRebuildStore(dynamo).firstVisitDay(namespaceOf(site));
            return (await rebuildSite(depsOf(dynamo, mode, undefined), d, { firstTrackedDay })).generation;
          },
          clock: Date.now,
          pseudonym: () => `erased_${randomUUID().replaceAll('-', '')}`,
        },
        domain,
        request,
      );
    };
    const record = ctx.aws
      ? await withStore(ctx, (dynamo) => run(dynamo, false))
      : await withLocalStore(ctx.dataDir, (dynamo, owner) => run(dynamo, !owner));
    if (ctx.json) ctx.printJson(record);
    else
      ctx.print(
        `${domain}: ${request.kind} erased: ${record.visitors} visitor ids, ${record.visit_items} visit items, ${record.payments} payments and ${record.customers} customers anonymised, ${record.archive_events} archived events removed from ${record.archive_files} files; reports rebuilt (generation ${record.generation})`,
      );
  });
}
