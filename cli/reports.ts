import { Command, Option } from 'commander';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { contextOf, parseArgs, UsageError } from './main.js';
import { withStore } from './store.js';
import { domainSchema } from '../lambdas/domain/site.js';
import { dayStart, isValidDay } from '../lambdas/domain/range.js';
import { lastPeriod, type ReportKind } from '../lambdas/domain/email-report/period.js';
import { unsubscribeToken } from '../lambdas/domain/email-report/unsubscribe-token.js';
import { mailLinks, periodSummary, summaryMail } from '../lambdas/services/email-reports.js';
import { renderSummary } from '../lambdas/domain/email-report/render.js';
import { emailSchema } from '../lambdas/services/account-settings.js';
import { dynamoReportServiceDeps } from '../lambdas/wiring/report-deps.js';
import { DynamoEmailReportStore } from '../lambdas/adapters/dynamo/email-report-store.js';
import { LOCAL_REPORT_SENDER } from '../local/outbox.js';
import { SERVER_FILE } from '../local/service.js';

/** `--period` names and the summary each previews. */
const PERIODS: Readonly<Record<'week' | 'month', ReportKind>> = { week: 'weekly', month: 'monthly' };
const FORMATS = ['text', 'html', 'eml'] as const;
const daySchema = z.string().refine(isValidDay, 'must be a date YYYY-MM-DD');

interface PreviewOptions {
  period: 'week' | 'month';
  format: (typeof FORMATS)[number];
  to: string;
  from?: string;
  appUrl?: string;
  on?: string;
}

/** The running local server's URL (`serve`/`start` write it), or the default port's. */
async function localUrl(dataDir: string): Promise<string> {
  try {
    const { url } = z.object({ url: z.string() }).parse(JSON.parse(await readFile(join(dataDir, SERVER_FILE), 'utf8')));
    return url;
  } catch {
    return 'http://localhost:8080';
  }
}

/**
 * `reports preview <site>`: the email report of the last complete week or month as the scheduled
 * function would send it now (`docs/app.md`, "Email reports"), from the same report code: its text
 * part, its HTML, or the whole MIME message (`--format eml`, what SES or the local outbox gets).
 * Sends nothing and writes nothing.
 */
export function registerReportsCommands(program: Command): void {
  const reports = program.command('reports').description('email reports: the weekly and monthly summaries');
  reports
    .command('preview <site>')
    .description('print the email report of the last complete week or month, as it would be sent now (sends nothing)')
    .addOption(new Option('--period <period>', 'the summary').choices(Object.keys(PERIODS)).default('week'))
    .addOption(new Option('--format <format>', 'what to print').choices(FORMATS).default('text'))
    .option('--to <address>', 'the recipient the unsubscribe link is for', 'preview@example.com')
    .option('--from <address>', `the sender (default: the local twin's ${LOCAL_REPORT_SENDER})`)
    .option('--app-url <url>', "the app's URL in the links (default: the local server's)")
    .option('--on <day>', 'as sent on this site-local day YYYY-MM-DD: the week or month before it (default: today)')
    .action(async (site: string, opts: PreviewOptions, command: Command) => {
      const ctx = contextOf(command);
      const domain = parseArgs(domainSchema, site, '<site>');
      const to = parseArgs(emailSchema, opts.to, '--to');
      const from = opts.from === undefined ? LOCAL_REPORT_SENDER : parseArgs(emailSchema, opts.from, '--from');
      const appUrl = opts.appUrl ?? (ctx.aws ? null : await localUrl(ctx.dataDir));
      if (appUrl === null) throw new UsageError('--app-url: is required with --aws (the AppUrl output of the stack)');
      await withStore(ctx, async (dynamo) => {
        const deps = dynamoReportServiceDeps(dynamo);
        const config = await deps.sites.getSite(domain);
        if (!config) throw new UsageError(`<site>: no site ${domain}`);
        const now =
          opts.on === undefined ? deps.clock() : dayStart(parseArgs(daySchema, opts.on, '--on'), config.timezone);
        const summary = await periodSummary(deps, config, lastPeriod(PERIODS[opts.period], now, config.timezone));
        if (ctx.json) return ctx.printJson(summary);
        // The site's token key when it has recipients (the link then works), else a throwaway one.
        const key = (await new DynamoEmailReportStore(dynamo).recipients(domain))?.key ?? randomBytes(32);
        if (opts.format === 'eml') return ctx.print(summaryMail(summary, to, key, { from, appUrl, date: now }).raw);
        const rendered = renderSummary(summary, mailLinks(appUrl, domain, unsubscribeToken(key, domain, to)));
        ctx.print(opts.format === 'html' ? rendered.html : `Subject: ${rendered.subject}\n\n${rendered.text}`);
      });
    });
}
