import * as z from 'zod';
import { FieldError, NotFoundError } from '../domain/errors.js';
import type { Provider } from '../domain/payments/facts.js';
import { HISTORY_KEYS } from '../domain/payments/history-keys.js';
import { ownSite, type SettingsDeps } from './account-settings.js';
import {
  importJobView,
  startHistoryImport,
  type ImportJobStore,
  type ImportJobView,
  type ImportStartDeps,
} from './history-import.js';

/** A day (`YYYY-MM-DD`, UTC) of the form; empty is no bound. */
const day = z
  .union([z.literal(''), z.iso.date('Enter a day as YYYY-MM-DD.')])
  .nullish()
  .transform((d) => (d ? Date.parse(`${d}T00:00:00Z`) / 1000 : null));

/** `POST /api/app/sites/{domain}/imports/{provider}` (docs/app.md): the key, an optional range of creation days, and a scope. */
export const importBody = z.strictObject({
  api_key: z.string('Paste the API key.').trim().min(1, 'Paste the API key.').max(512, 'At most 512 characters.'),
  /** Objects created on or after this day (UTC). */
  since: day,
  /** Objects created before this day (UTC). */
  until: day,
  /** `HISTORY_KEYS[provider].scope`'s id (a Lemon Squeezy store id). */
  scope: z.string().trim().max(64, 'At most 64 characters.').nullish(),
});
export type ImportBody = z.infer<typeof importBody>;

/** The app's import jobs: starting (owner) and reading them. Absent where the imports function is not deployed. */
export interface AppImportDeps {
  start: ImportStartDeps;
  jobs: Pick<ImportJobStore, 'get'>;
}

/**
 * Starts (or resumes) the import of `provider`'s history into the account's site (Site settings → the
 * provider → Import history; `docs/payments.md`, "Importing a provider's history"): the key is checked
 * against the provider's form before anything is stored, then sealed on the job (`startHistoryImport`).
 * @throws NotFoundError (404) when the account owns no such site
 * @throws FieldError (400) for a key of another form (`api_key`), a range that ends before it starts (`until`), a bad scope (`scope`)
 * @throws ConflictError (409) while an import of the site and provider runs
 * @throws the invoker's error when the imports function cannot be invoked (the app answers 503; a new start resumes the job)
 */
export async function startAppImport(
  deps: Pick<SettingsDeps, 'sites'> & { imports: AppImportDeps },
  account: string,
  domain: string,
  provider: Provider,
  body: ImportBody,
  by: string,
): Promise<ImportJobView> {
  const site = await ownSite(deps, account, domain);
  const spec = HISTORY_KEYS[provider];
  const key = spec.keySchema.safeParse(body.api_key);
  if (!key.success) throw new FieldError('api_key', `${key.error.issues[0]?.message ?? 'not a key'}.`);
  if (body.since !== null && body.until !== null && body.until <= body.since)
    throw new FieldError('until', 'The end must be after the start.');
  let scope: string | null = null;
  if (body.scope) {
    if (!spec.scope) throw new FieldError('scope', `${spec.label} imports take no scope.`);
    const parsed = spec.scope.schema.safeParse(body.scope);
    if (!parsed.success) throw new FieldError('scope', `${parsed.error.issues[0]?.message ?? 'not valid'}.`);
    scope = parsed.data;
  }
  const request = {
    site: site.domain,
    provider,
    apiKey: key.data,
    range: { since: body.since, until: body.until },
    scope,
    by,
  };
  const job = await startHistoryImport(deps.imports.start, request);
  return importJobView(job, deps.imports.start.clock());
}

/** The site's job of `provider` as the app shows it, or null when none was ever started. @throws NotFoundError (404) when the account owns no such site */
export async function appImportStatus(
  deps: Pick<SettingsDeps, 'sites' | 'clock'> & { imports: AppImportDeps },
  account: string,
  domain: string,
  provider: Provider,
): Promise<{ job: ImportJobView | null }> {
  const site = await ownSite(deps, account, domain);
  const job = await deps.imports.jobs.get(site.domain, provider);
  return { job: job ? importJobView(job, deps.clock()) : null };
}

/** @throws NotFoundError (404) where imports are not deployed */
export function importsOf<T>(imports: T | undefined): T {
  if (!imports) throw new NotFoundError('not found');
  return imports;
}
