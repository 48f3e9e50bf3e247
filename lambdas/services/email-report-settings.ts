import * as z from 'zod';
import { FieldError, NotFoundError } from '../domain/errors.js';
import { tokenClaims, verifyToken } from '../domain/email-report/unsubscribe-token.js';
import { emailSchema } from './account-settings.js';
import type { EmailReportStore, Recipient } from './email-reports.js';

/**
 * Email reports in the app (`docs/app.md`, "Email reports"): the Site settings card's list of
 * recipients (owners change it) and the unsubscribe link of each mail. Apart from the sending
 * (`email-reports.ts`), so that the scheduled function's bundle carries no account settings.
 */

/** Most recipients a site's email reports go to: the recipients item stays under its 4 KB bound. */
export const MAX_RECIPIENTS = 10;

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
