import * as z from 'zod';
import { FieldError, NotFoundError } from '../domain/errors.js';
import type { SiteConfig } from '../domain/site.js';
import { REPORT_KINDS, duePeriod, type ReportKind, type ReportPeriod } from '../domain/email-report/period.js';
import { SUMMARY_ROWS, buildSummary, type EmailSummary } from '../domain/email-report/summary.js';
import { renderSummary } from '../domain/email-report/render.js';
import { mimeMessage } from '../domain/email-report/mime.js';
import { addressId, tokenClaims, unsubscribeToken, verifyToken } from '../domain/email-report/unsubscribe-token.js';
import { breakdown, goals, overview, type ReportDeps } from './reports.js';
import { emailSchema } from './account-settings.js';
import type { Telemetry } from '../observability/telemetry.js';

/** Most recipients a site's email reports go to: the recipients item stays under its 4 KB bound. */
export const MAX_RECIPIENTS = 10;

/** A recipient and the summaries they receive. */
export interface Recipient {
  email: string;
  weekly: boolean;
  monthly: boolean;
}

/** A site's recipients and the key that signs their unsubscribe tokens (`EMAIL_RECIPIENTS`). */
export interface RecipientList {
  recipients: Recipient[];
  key: Buffer;
}

/** The recipients and send markers of email reports (`DynamoEmailReportStore`). */
export interface EmailReportStore {
  recipients(domain: string): Promise<RecipientList | null>;
  /** Replaces the list, creating the site's token key the first time. */
  setRecipients(domain: string, recipients: readonly Recipient[], nowMs: number): Promise<void>;
  /** Removes the recipient of `id` (`addressId`); false when none has it. */
  removeRecipient(domain: string, id: string, nowMs: number): Promise<boolean>;
  /** Records that the summary of `period` goes to `id` now; false when a run has already claimed it. */
  claim(domain: string, kind: ReportKind, period: string, id: string, nowMs: number): Promise<boolean>;
  /** Marks a claimed send done, with SES's message id. */
  sent(domain: string, kind: ReportKind, period: string, id: string, messageId: string): Promise<void>;
  /** Drops a claim whose send failed, so the next run tries again. */
  release(domain: string, kind: ReportKind, period: string, id: string): Promise<void>;
}

/** A raw MIME message to one recipient (`MailSender`). */
export interface OutgoingMail {
  from: string;
  to: string;
  raw: string;
}

/** SES in AWS (`SesMailSender`), the outbox folder locally. */
export interface MailSender {
  /** Sends one message; resolves with the provider's message id. @throws when it is not accepted */
  send(mail: OutgoingMail): Promise<string>;
}

/** Where reports come from and go: the report service's deps, the store, the sender, the verified sender address and the app's URL. */
export interface EmailReportDeps {
  reports: ReportDeps;
  store: EmailReportStore;
  sender: MailSender;
  /** The verified SES identity the reports come from (`-c reportSender=`). */
  from: string;
  /** The app's public URL (`https://stats.example.com`), for the dashboard and unsubscribe links. */
  appUrl: string;
}

/**
 * The summary of `period` for `site`, every figure from the report service that serves the
 * dashboard and `/api/v1` (`lambdas/services/reports.ts`): the overview of the period and of the
 * period before (`overviewChange`'s rule for the change), the channel, source and page breakdowns
 * and the goals of both.
 */
export async function periodSummary(deps: ReportDeps, site: SiteConfig, period: ReportPeriod): Promise<EmailSummary> {
  const a = { from: period.range.from, to: period.range.to };
  const b = { from: period.previous.from, to: period.previous.to };
  // The previous period's rows in full (the report's maximum), so a row of this period finds its match.
  const ALL = 1000;
  const read = (dimension: 'channel' | 'referrer' | 'page') =>
    Promise.all([
      breakdown(deps, site.account, site.domain, dimension, a, SUMMARY_ROWS),
      breakdown(deps, site.account, site.domain, dimension, b, ALL),
    ]);
  const [cur, prev, channel, referrer, page, goal] = await Promise.all([
    overview(deps, site.account, site.domain, a),
    overview(deps, site.account, site.domain, b),
    read('channel'),
    read('referrer'),
    read('page'),
    Promise.all([
      goals(deps, site.account, site.domain, a, null, SUMMARY_ROWS),
      goals(deps, site.account, site.domain, b, null, ALL),
    ]),
  ]);
  const pair = <T extends { rows: unknown }>([x, y]: [T, T]) => ({ current: x.rows, previous: y.rows });
  return buildSummary({
    site: site.domain,
    kind: period.kind,
    range: cur.range,
    previous_range: prev.range,
    current: cur.current,
    previous: prev.current,
    lists: {
      channel: pair(channel) as never,
      referrer: pair(referrer) as never,
      page: pair(page) as never,
      goal: pair(goal) as never,
    },
  });
}

/** The links of a recipient's mail. */
export function mailLinks(appUrl: string, site: string, token: string) {
  const base = appUrl.replace(/\/+$/, '');
  return {
    dashboard: `${base}/sites/${encodeURIComponent(site)}`,
    unsubscribe: `${base}/unsubscribe/${token}`,
    oneClick: `${base}/api/app/unsubscribe/${token}`,
  };
}

/**
 * The MIME message of a summary to `to`: HTML and text parts, and `List-Unsubscribe` with
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 2369, RFC 8058), which mail providers
 * show as an unsubscribe button and POST to without a sign-in.
 */
export function summaryMail(
  summary: EmailSummary,
  to: string,
  key: Buffer,
  opts: { from: string; appUrl: string; date: number },
): OutgoingMail {
  const links = mailLinks(opts.appUrl, summary.site, unsubscribeToken(key, summary.site, to));
  const { subject, html, text } = renderSummary(summary, links);
  const raw = mimeMessage({
    from: opts.from,
    to,
    subject,
    html,
    text,
    date: opts.date,
    headers: [
      ['List-Unsubscribe', `<${links.oneClick}>`],
      ['List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'],
    ],
  });
  return { from: opts.from, to, raw };
}

/**
 * Sends `site`'s due summaries (`duePeriod`: Monday for the week before, the 1st for the month
 * before, from 08:00 site-local) to each recipient who chose them, exactly once per period and
 * address: a conditional marker is written before the send, so a retried or concurrent run skips
 * the address; a failed send drops its marker and the next run (5 minutes later) tries again. A
 * send that succeeds but whose marker update is lost stays `sending` and is not repeated: one mail
 * missing beats one mail twice. Resolves with the number of mails sent.
 */
export async function sendDueReports(deps: EmailReportDeps, site: SiteConfig): Promise<number> {
  const now = deps.reports.clock();
  const due = REPORT_KINDS.map((kind) => duePeriod(kind, now, site.timezone)).filter(
    (p): p is ReportPeriod => p !== null,
  );
  if (due.length === 0) return 0;
  const list = await deps.store.recipients(site.domain);
  if (!list) return 0;
  let sent = 0;
  for (const period of due) {
    const to = list.recipients.filter((r) => r[period.kind]);
    if (to.length === 0) continue;
    let summary: EmailSummary | undefined;
    for (const r of to) {
      const id = addressId(r.email);
      if (!(await deps.store.claim(site.domain, period.kind, period.key, id, now))) continue;
      let messageId: string;
      try {
        summary ??= await periodSummary(deps.reports, site, period);
        messageId = await deps.sender.send(
          summaryMail(summary, r.email, list.key, { from: deps.from, appUrl: deps.appUrl, date: now }),
        );
      } catch (error) {
        await deps.store.release(site.domain, period.kind, period.key, id);
        throw error;
      }
      sent++;
      // Past the send, a failure leaves the claim `sending`: never released, never sent again.
      await deps.store.sent(site.domain, period.kind, period.key, id, messageId);
    }
  }
  return sent;
}

/**
 * The scheduled function's hook: `sendDueReports` for one site, its failure logged (the next run,
 * 5 minutes later, tries again) so that one site's mail never stops another's work.
 */
export function emailReportSender(
  deps: EmailReportDeps,
  logger: Telemetry['logger'],
): (site: SiteConfig) => Promise<number> {
  return async (site) => {
    try {
      return await sendDueReports(deps, site);
    } catch (error) {
      logger.error('email reports failed; the next run tries again', { site: site.domain, error: error as Error });
      return 0;
    }
  };
}

// ---- Settings (the app's Site settings, owners only) ------------------------------------------

const recipientSchema = z
  .object({
    email: z.string('Enter an email address.').trim().pipe(emailSchema),
    weekly: z.boolean('Choose true or false.'),
    monthly: z.boolean('Choose true or false.'),
  })
  .strict();

/** `PUT /api/app/sites/{domain}/email-reports` (`docs/app.md`): the whole list, at most `MAX_RECIPIENTS`, each address once. */
export const emailReportsBody = z
  .object({
    recipients: z
      .array(recipientSchema, 'Send a list of recipients.')
      .max(MAX_RECIPIENTS, `At most ${MAX_RECIPIENTS} recipients per site.`)
      .refine((list) => new Set(list.map((r) => r.email)).size === list.length, 'Each address may appear once.'),
  })
  .strict();

/** What the settings page shows: whether reports can be sent (a verified sender is configured) and the recipients. */
export interface EmailReportsView {
  enabled: boolean;
  /** Why reports are off, for the settings page; null when they are on. */
  disabled_reason: string | null;
  from: string | null;
  max_recipients: number;
  recipients: Recipient[];
}

/** Why reports are off while no sender is configured (`docs/deploy.md`, "Email reports"). */
export const NO_SENDER =
  'Email reports are off: the stack has no verified sender. Deploy with -c reportSender=reports@your-domain (docs/deploy.md, "Email reports").';

/** `GET /api/app/sites/{domain}/email-reports`. */
export async function emailReportsView(
  store: EmailReportStore,
  from: string | null,
  domain: string,
): Promise<EmailReportsView> {
  const list = await store.recipients(domain);
  return {
    enabled: from !== null,
    disabled_reason: from === null ? NO_SENDER : null,
    from,
    max_recipients: MAX_RECIPIENTS,
    recipients: list?.recipients ?? [],
  };
}

/**
 * Replaces a site's recipients.
 * @throws FieldError (400, field `recipients`) while no sender is configured and the list is not empty
 */
export async function setEmailReports(
  store: EmailReportStore,
  from: string | null,
  domain: string,
  body: z.infer<typeof emailReportsBody>,
  nowMs: number,
): Promise<EmailReportsView> {
  if (from === null && body.recipients.length > 0) throw new FieldError('recipients', NO_SENDER);
  await store.setRecipients(domain, body.recipients, nowMs);
  return emailReportsView(store, from, domain);
}

/**
 * `POST /api/app/unsubscribe/{token}` (no sign-in; RFC 8058 one-click too): removes the address
 * the token names from its site's recipients. A token whose MAC does not verify under the site's
 * key is as unknown as no token (404); an address already removed answers the same as a removal.
 */
export async function unsubscribe(
  store: EmailReportStore,
  token: string,
  nowMs: number,
): Promise<{ site: string; removed: boolean }> {
  const claims = tokenClaims(token);
  const list = claims ? await store.recipients(claims.site) : null;
  if (!claims || !list || !verifyToken(list.key, token)) throw new NotFoundError('This unsubscribe link is not valid.');
  const removed = await store.removeRecipient(claims.site, claims.id, nowMs);
  return { site: claims.site, removed };
}
