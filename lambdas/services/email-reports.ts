import type { SiteConfig } from '../domain/site.js';
import { REPORT_KINDS, duePeriod, type ReportKind, type ReportPeriod } from '../domain/email-report/period.js';
import { SUMMARY_ROWS, buildSummary, type EmailSummary } from '../domain/email-report/summary.js';
import { renderSummary } from '../domain/email-report/render.js';
import { mimeMessage } from '../domain/email-report/mime.js';
import { addressId, unsubscribeToken } from '../domain/email-report/unsubscribe-token.js';
import { breakdown, goals, overview, type ReportDeps } from './reports.js';
import type { Telemetry } from '../observability/telemetry.js';

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
