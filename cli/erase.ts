import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { contextOf, parseArgs, UsageError } from './main.js';
import { localOnly, withLocalStore } from './store.js';
import { depsOf, localMode } from './rebuild.js';
import { confirmed } from './sites-delete.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoErasureStore } from '../lambdas/adapters/dynamo/erasure-store.js';
import { DynamoRebuildStore } from '../lambdas/adapters/dynamo/rebuild-store.js';
import { domainSchema, namespaceOf, type SiteConfig } from '../lambdas/domain/site.js';
import { rebuildSite } from '../lambdas/services/rebuild.js';
import { erasePerson, erasureRequestSchema, type ErasureRequest } from '../lambdas/services/erasure.js';
import { LocalArchiveEraser } from '../local/archive-eraser.js';
import { localPaths } from '../local/service.js';

interface EraseOptions {
  site: string;
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
 * `erase`: erases a person from a site (GDPR Art. 17, CCPA;
 * `docs/security.md`, "Erasing a person"): their visits and timelines, their
 * ids on payments, their events in the archive, then a rebuild so that no
 * report holds them; an audit record with counts only.
 */
export function registerEraseCommand(program: Command): void {
  program
    .command('erase')
    .description(
      "erase a person from a site (GDPR Art. 17, CCPA): visits, timelines, ids on payments, archived events; reports are rebuilt and keep the payments' money (docs/security.md)",
    )
    .requiredOption('--site <domain>', 'the site')
    .option('--visitor <id>', 'the visitor id (footfall.visitorId() in the browser, visitor_id in the archive)')
    .option('--customer <id>', "the payment provider's customer id (e.g. Stripe cus_…)")
    .option('--email <address>', 'not stored by Footfall: explains how to find the customer id instead')
    .option('--yes', 'do not ask for the domain to be typed')
    .action(async (opts: EraseOptions, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, opts.site, '--site');
      const request = requestOf(opts);
      localOnly(ctx, 'erase');
      if (
        !opts.yes &&
        !(await confirmed(domain, `This erases the ${request.kind} from ${domain} and rebuilds its reports.`))
      )
        throw new UsageError('--site: not confirmed; nothing erased');
      const record = await withLocalStore(ctx.dataDir, async (dynamo, owner) => {
        const mode = localMode(ctx, dynamo, !owner);
        await mode.prepare();
        const config = new DynamoConfigStore(dynamo);
        return erasePerson(
          {
            sites: config,
            store: new DynamoErasureStore(dynamo),
            archive: new LocalArchiveEraser(localPaths(ctx.dataDir).archive),
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
      });
      if (ctx.json) ctx.printJson(record);
      else
        ctx.print(
          `${domain}: ${request.kind} erased: ${record.visitors} visitor ids, ${record.visit_items} visit items, ${record.payments} payments and ${record.customers} customers anonymised, ${record.archive_events} archived events removed from ${record.archive_files} files; reports rebuilt (generation ${record.generation})`,
        );
    });
}
