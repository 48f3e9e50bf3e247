import { FieldError } from '../domain/errors.js';
import { ownSite, type SettingsDeps } from './account-settings.js';
import {
  erasureView,
  newErasureRequest,
  type EraseBody,
  type ErasureStatus,
  type ErasureView,
} from './erasure-requests.js';

/** The audit records the app lists, newest first: one page (every record stays in the table). */
const RECORDS_SHOWN = 20;

/**
 * Queues the erasure of a person from the account's site (Site settings ›
 * Erase a person; `docs/security.md`, "Erasing a person"): the scheduled
 * function carries it out within its runs (`advanceErasures`) and the app
 * polls `erasureStatus`. The answer names no id of the person.
 * @throws NotFoundError (404) when the account owns no such site
 * @throws FieldError (400, field `confirm`) when the typed domain is not the site's; (field `kind`) for an email
 */
export async function requestAppErasure(
  deps: Pick<SettingsDeps, 'sites' | 'erasures' | 'clock' | 'newId'>,
  account: string,
  domain: string,
  body: EraseBody,
): Promise<ErasureView> {
  const site = await ownSite(deps, account, domain);
  const request = newErasureRequest(site.domain, body, deps.clock(), deps.newId());
  if (body.confirm !== site.domain) throw new FieldError('confirm', `Type ${site.domain} to confirm.`);
  await deps.erasures.add(request);
  return erasureView(request);
}

/** The site's erasures under way (phase, percent) and the audit records of the finished ones (counts only). */
export async function appErasureStatus(
  deps: Pick<SettingsDeps, 'sites' | 'erasures'>,
  account: string,
  domain: string,
): Promise<ErasureStatus> {
  const site = await ownSite(deps, account, domain);
  const [pending, done] = await Promise.all([
    deps.erasures.pending(site.domain),
    deps.erasures.records(site.domain, RECORDS_SHOWN),
  ]);
  return { pending: pending.map(erasureView), done };
}
