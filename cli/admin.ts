import { Command, Option } from 'commander';
import * as z from 'zod';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import {
  ATTRIBUTION_MODELS,
  DEFAULT_LOOKBACK_DAYS,
  DEFAULT_RATE_LIMIT,
  accountIdSchema,
  domainSchema,
  siteConfigSchema,
  siteSettingsSchema,
  type SiteConfig,
} from '../lambdas/domain/site.js';
import { PROVIDERS } from '../lambdas/domain/payments/facts.js';
import { DynamoKeyStore } from '../lambdas/adapters/dynamo/key-store.js';
import { recreditSite } from '../lambdas/services/payments.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import { contextOf, parseArgs, parseFields } from './main.js';
import { formatTable } from './output.js';
import { secretBoxFor, withStore } from './store.js';
import { API_URL_LOOKUP, baseUrl } from './urls.js';
import { registerSiteDeleteCommand } from './sites-delete.js';

/** A numeric option's text as a number (`abc` → NaN, which the site schema reports with the range it allows). */
const numeric = (text: string | undefined) => (text === undefined ? undefined : Number(text));

/** The command-line names of a site's fields and the text given for each, for `parseFields`' messages. */
function siteFields(given: Record<string, string | undefined>) {
  return {
    domain: { name: '<domain>', given: given.domain },
    timezone: { name: '--timezone', given: given.timezone },
    account: { name: '--account', given: given.account },
    attribution: { name: '--attribution', given: given.attribution },
    lookback_days: { name: '--lookback-days', given: given.lookbackDays },
    rate_limit: { name: '--rate-limit', given: given.rateLimit },
  };
}

const siteRow = (s: SiteConfig) => ({
  domain: s.domain,
  timezone: s.timezone,
  account: s.account,
  attribution: s.attribution,
  lookback_days: s.lookback_days,
  rate_limit: s.rate_limit,
});

/** `accounts …` and `sites …`: the admin commands (`docs/architecture.md` "Operator interface"). */
export function registerAdminCommands(program: Command): void {
  const accounts = program.command('accounts').description('manage accounts (owners of sites and API keys)');
  accounts
    .command('add <id>')
    .description('add an account')
    .action(async (id: string, _opts, command: Command) => {
      const ctx = contextOf(command);
      const accountId = parseArgs(accountIdSchema, id, '<id>');
      const account = await withStore(ctx, (db) => new DynamoConfigStore(db).addAccount(accountId, new Date()));
      if (ctx.json) ctx.printJson(account);
      else ctx.print(`account ${account.id} added`);
    });

  const sites = program.command('sites').description('manage tracked sites');
  sites
    .command('add <domain>')
    .description('add a site to track')
    // Checked in the action, not by commander, so that a bad <domain> is reported before a missing option.
    .option('--timezone <iana>', "required: IANA timezone of the site's days, e.g. Europe/Berlin or UTC")
    .option('--account <id>', 'required: account that owns the site (footfall accounts add <id>)')
    .addOption(
      new Option('--attribution <model>', 'attribution model').choices(ATTRIBUTION_MODELS).default('last_non_direct'),
    )
    .option('--lookback-days <n>', 'attribution lookback window in days', String(DEFAULT_LOOKBACK_DAYS))
    .option('--rate-limit <n>', 'events per second accepted per ingest instance', String(DEFAULT_RATE_LIMIT))
    .action(async (domain: string, opts: Record<string, string | undefined>, command: Command) => {
      const ctx = contextOf(command);
      const site = parseFields(
        siteConfigSchema,
        {
          domain,
          timezone: opts.timezone,
          account: opts.account,
          attribution: opts.attribution,
          lookback_days: numeric(opts.lookbackDays),
          rate_limit: numeric(opts.rateLimit),
          created: new Date().toISOString(),
        },
        siteFields({ domain, ...opts }),
      );
      const added = await withStore(ctx, (db) => new DynamoConfigStore(db).addSite(site));
      if (ctx.json) ctx.printJson(siteRow(added));
      else ctx.print(`site ${added.domain} added (${added.timezone}, account ${added.account}, ${added.attribution})`);
    });

  sites
    .command('list')
    .description('list sites')
    .action(async (_opts, command: Command) => {
      const ctx = contextOf(command);
      const list = await withStore(ctx, (db) => new DynamoConfigStore(db).listSites());
      const rows = list.map(siteRow);
      if (ctx.json) ctx.printJson(rows);
      else
        ctx.print(formatTable(rows, ['domain', 'timezone', 'account', 'attribution', 'lookback_days', 'rate_limit']));
    });

  sites
    .command('set <domain>')
    .description("change a site's settings")
    .option('--timezone <iana>', "timezone of the site's days")
    .addOption(new Option('--attribution <model>', 'attribution model').choices(ATTRIBUTION_MODELS))
    .option('--lookback-days <n>', 'attribution lookback window in days')
    .option('--rate-limit <n>', 'events per second accepted per ingest instance')
    .action(async (domain: string, opts: Record<string, string | undefined>, command: Command) => {
      const ctx = contextOf(command);
      const changes = parseFields(
        siteSettingsSchema,
        {
          timezone: opts.timezone,
          attribution: opts.attribution,
          lookback_days: numeric(opts.lookbackDays),
          rate_limit: numeric(opts.rateLimit),
        },
        siteFields(opts),
      );
      // A new model or window credits every payment of the site again.
      const recredit = changes.attribution !== undefined || changes.lookback_days !== undefined;
      const { site, recredited } = await withStore(ctx, async (db) => {
        const updated = await new DynamoConfigStore(db).updateSite(domain.toLowerCase(), changes);
        return { site: updated, recredited: recredit ? await recreditSite(dynamoPaymentDeps(db), updated) : 0 };
      });
      if (ctx.json) ctx.printJson({ ...siteRow(site), recredited_payments: recredited });
      else ctx.print(`site ${site.domain} updated${recredit ? `; ${recredited} payments credited again` : ''}`);
    });

  registerSiteDeleteCommand(sites);
}

/** `providers connect|list`: the payment providers whose webhooks a site takes. */
export function registerProviderCommands(program: Command): void {
  const providers = program.command('providers').description('connect payment providers (webhook secrets)');
  providers
    .command('connect <provider>')
    .description('store the webhook signing secret of a provider for a site')
    .requiredOption('--site <domain>', 'the site the payments belong to')
    .requiredOption('--webhook-secret <secret>', 'the signing secret the provider shows for the webhook endpoint')
    .option(
      '--url <base>',
      "the address the provider reaches the service at (default: the running local server; with --aws: the stack's ApiUrl output)",
    )
    .action(async (provider: string, opts: { site: string; webhookSecret: string; url?: string }, command: Command) => {
      const ctx = contextOf(command);
      const name = parseArgs(z.enum(PROVIDERS), provider, '<provider>');
      const domain = parseArgs(domainSchema, opts.site, '--site');
      const secret = parseArgs(z.string().min(8, 'must be at least 8 characters').max(512), opts.webhookSecret, {
        name: '--webhook-secret',
        secret: true,
      });
      const base = await baseUrl(ctx, opts.url);
      const secrets = await secretBoxFor(ctx);
      await withStore(ctx, (db) =>
        new DynamoConfigStore(db, secrets).connectProvider(domain, name, secret, new Date()),
      );
      const path = `/api/webhooks/${name}/${domain}`;
      if (ctx.json)
        ctx.printJson({
          provider: name,
          site: domain,
          webhook_path: path,
          webhook_url: base ? `${base}${path}` : null,
        });
      else if (base) ctx.print(`${name} connected to ${domain}: point its webhook at ${base}${path}`);
      else
        ctx.print(
          `${name} connected to ${domain}: point its webhook at <ApiUrl>${path.slice(1)}, where <ApiUrl> is the ApiUrl output of the stack (${API_URL_LOOKUP}; or pass --url)`,
        );
    });
  providers
    .command('list')
    .description('list the providers connected to a site')
    .requiredOption('--site <domain>', 'the site')
    .action(async (opts: { site: string }, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, opts.site, '--site');
      const list = await withStore(ctx, (db) => new DynamoConfigStore(db).listProviders(domain));
      if (ctx.json) ctx.printJson(list);
      else ctx.print(formatTable(list, ['provider', 'connected']));
    });
}

/** `keys create|list|revoke`: API keys of the report API and MCP (`docs/security.md` "API keys"). */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys (report API and MCP)');
  keys
    .command('create')
    .description('create an API key for an account; the key is printed once')
    .requiredOption('--account <id>', 'the account whose sites the key reads')
    .option('--name <label>', 'a label to recognise the key by')
    .action(async (opts: { account: string; name?: string }, command: Command) => {
      const ctx = contextOf(command);
      const account = parseArgs(accountIdSchema, opts.account, '--account');
      const name = opts.name === undefined ? null : parseArgs(z.string().trim().min(1).max(100), opts.name, '--name');
      const created = await withStore(ctx, async (db) => {
        if (!(await new DynamoConfigStore(db).getAccount(account)))
          throw new Error(`account ${account} does not exist`);
        return new DynamoKeyStore(db).create(account, name, new Date());
      });
      if (ctx.json)
        ctx.printJson({
          id: created.id,
          key: created.key,
          account: created.account,
          name: created.name,
          created: created.created,
        });
      else ctx.print(`${created.key}\n(key ${created.id} for account ${account}; shown once, only its hash is stored)`);
    });
  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .action(async (_opts, command: Command) => {
      const ctx = contextOf(command);
      const list = await withStore(ctx, (db) => new DynamoKeyStore(db).list());
      if (ctx.json)
        ctx.printJson(
          list.map((k) => ({
            id: k.id,
            account: k.account,
            name: k.name,
            created: k.created,
            last_used: k.last_used,
            revoked: k.revoked,
          })),
        );
      else
        ctx.print(
          formatTable(
            list.map((k) => ({ ...k })),
            ['id', 'account', 'name', 'created', 'last_used', 'revoked'],
          ),
        );
    });
  keys
    .command('revoke <id>')
    .description('revoke an API key; its next request fails')
    .action(async (id: string, _opts, command: Command) => {
      const ctx = contextOf(command);
      const revoked = await withStore(ctx, (db) => new DynamoKeyStore(db).revoke(id, new Date()));
      if (ctx.json) ctx.printJson(revoked);
      else ctx.print(`key ${revoked.id} revoked`);
    });
}
