import * as z from 'zod';
import { ConflictError, FieldError, ForbiddenError, NotFoundError } from '../domain/errors.js';
import { STRIPE_SECRET_PREFIX } from '../domain/payments/providers/stripe.js';
import {
  ATTRIBUTION_MODELS,
  domainSchema,
  isValidTimezone,
  namespaceOf,
  siteConfigSchema,
  type SiteConfig,
  type SiteSettings,
} from '../domain/site.js';
import { PROVIDERS, type Provider } from '../domain/payments/facts.js';
import { dayStart, localHour } from '../domain/range.js';
import type { ApiKeyInfo } from '../domain/api-key.js';
import { AlreadyExistsError } from '../domain/errors.js';
import type { Member, User } from '../domain/auth/accounts.js';
import { keepsAnOwner, roleSchema, type Role } from '../domain/auth/role.js';
import { createInvite, normalizeEmail, type AuthDeps } from './auth.js';
import { beginSiteDeletion, type SiteDeletionStore } from './site-deletion.js';
import type { ErasureQueue } from './erasure-requests.js';

/** The last webhook a provider sent for a site, and what became of it (`docs/app.md`). */
export interface WebhookStatus {
  ts: string;
  status: number;
  result: string;
}

/** Deliveries refused for their signature: how many, and when the last came (ISO 8601). */
export interface RejectedWebhooks {
  count: number;
  last_ts: string;
}

/** A site's webhook record: per provider, the last verified delivery and the refused ones. */
export interface WebhookLog {
  last: ReadonlyMap<Provider, WebhookStatus>;
  rejected: ReadonlyMap<Provider, RejectedWebhooks>;
}

/** What account settings need: the stores behind each section (DynamoDB in AWS and locally). */
export interface SettingsDeps {
  sites: {
    getSite(domain: string): Promise<SiteConfig | null>;
    listSites(): Promise<SiteConfig[]>;
    addSite(site: SiteConfig): Promise<SiteConfig>;
    updateSite(domain: string, changes: SiteSettings): Promise<SiteConfig>;
  };
  /** The last local hour (`YYYY-MM-DDTHH`) or day (`YYYY-MM-DD`) of the site's timezone with a visitor active, or null. */
  activity: { lastActive(domain: string): Promise<string | null> };
  /**
   * Where webhook signing secrets go: the config store, which seals them
   * (`docs/security.md`); connect, disconnect and list never return a secret.
   */
  providers: {
    connectProvider(domain: string, provider: Provider, secret: string, now: Date): Promise<void>;
    disconnectProvider(domain: string, provider: Provider): Promise<void>;
    listProviders(domain: string): Promise<Array<{ provider: string; connected: string }>>;
  };
  webhooks: { webhookLog(domain: string): Promise<WebhookLog> };
  keys: {
    create(account: string, name: string | null, now: Date): Promise<ApiKeyInfo & { key: string }>;
    list(): Promise<ApiKeyInfo[]>;
    info(id: string): Promise<ApiKeyInfo | null>;
    revoke(id: string, now: Date): Promise<ApiKeyInfo>;
  };
  users: AuthDeps['users'] & {
    add(email: string, account: string, now: Date, role: Role): Promise<User>;
    remove(user: Pick<User, 'email' | 'account'>): Promise<void>;
    /** Resolves false when the user is not in the account. */
    setRole(user: Pick<User, 'email' | 'account'>, role: Role): Promise<boolean>;
    /** Runs `change` alone among the account's changes of owners. @throws ConflictError (409) when one is under way */
    withRoleLock<T>(account: string, now: number, change: () => Promise<T>): Promise<T>;
  };
  /** Where a site deletion is recorded (`beginSiteDeletion`; `docs/deploy.md`, "Deleting a site"). */
  deletions: SiteDeletionStore;
  /** Where the erasures the app asks for wait for the scheduled function (`requestAppErasure`), and their audit records. */
  erasures: ErasureQueue;
  /** A fresh random id (an erasure request's). */
  newId: () => string;
  /** Credits every payment of a site again (a new attribution model or lookback window). */
  recredit(site: SiteConfig): Promise<number>;
  clock: () => number;
}

// ---- Sites --------------------------------------------------------------------

/** A site as account settings show it (`GET /api/app/sites`). */
export interface AppSite {
  domain: string;
  timezone: string;
  attribution: SiteConfig['attribution'];
  lookback_days: number;
  created: string;
  /**
   * Whether events arrive: the start (RFC 3339, UTC) of the last local hour
   * with a visitor active, once the sessionizer has seen it (seconds locally,
   * the batching window in AWS); null before the first. Precise to the hour.
   */
  last_event_ts: string | null;
}

const timezone = z.string().trim().refine(isValidTimezone, 'Choose an IANA timezone such as Europe/Berlin.');

export const addSiteBody = z.object({ domain: domainSchema, timezone });
export const updateSiteBody = z
  .object({
    timezone,
    attribution: z.enum(ATTRIBUTION_MODELS, 'Choose last_non_direct, last_touch or first_touch.'),
    lookback_days: z
      .number('Enter a number of days.')
      .int('Enter whole days.')
      .min(1, 'At least 1 day.')
      .max(365, 'At most 365 days.'),
  })
  .partial()
  .strict();

const QUARTER_HOUR_MS = 15 * 60_000;

/**
 * The first instant (ms) of a local hour label (`YYYY-MM-DDTHH`) or day
 * (`YYYY-MM-DD`) in `timezone`: the day's start, then quarter hours until the
 * label's hour (offsets come in quarter hours: +05:45, +08:45).
 */
export function periodStart(period: string, timezone: string): number {
  const [day, hour] = period.split('T') as [string, string | undefined];
  const start = dayStart(day, timezone);
  if (hour === undefined) return start;
  for (let t = start; t < start + 26 * 3_600_000; t += QUARTER_HOUR_MS) if (localHour(t, timezone) === period) return t;
  return start;
}

async function appSite(deps: Pick<SettingsDeps, 'activity'>, site: SiteConfig): Promise<AppSite> {
  const last = await deps.activity.lastActive(namespaceOf(site));
  return {
    domain: site.domain,
    timezone: site.timezone,
    attribution: site.attribution,
    lookback_days: site.lookback_days,
    created: site.created,
    last_event_ts: last ? new Date(periodStart(last, site.timezone)).toISOString() : null,
  };
}

/** The site of `domain` if the account owns it; another account's site is as unknown as none (404). */
export async function ownSite(deps: Pick<SettingsDeps, 'sites'>, account: string, domain: string): Promise<SiteConfig> {
  const site = await deps.sites.getSite(domain.toLowerCase());
  if (!site || site.account !== account) throw new NotFoundError(`no site ${domain}`);
  return site;
}

export async function listAppSites(
  deps: Pick<SettingsDeps, 'sites' | 'activity'>,
  account: string,
): Promise<{ sites: AppSite[] }> {
  const sites = (await deps.sites.listSites()).filter((s) => s.account === account);
  return { sites: await Promise.all(sites.map((s) => appSite(deps, s))) };
}

/**
 * Adds a site to the account. A domain is tracked once in a deployment (its events are keyed by
 * domain), and an account may not claim a subdomain of another account's site (`docs/security.md`,
 * "One domain, one account"). Another account's domain answers the same 409 whichever account
 * holds it, and the same for the domain and a subdomain of it: the owner learns that the domain
 * is taken in this deployment, never by whom.
 * @throws ConflictError (409, field `domain`)
 */
export async function addSite(
  deps: Pick<SettingsDeps, 'sites' | 'activity' | 'clock'>,
  account: string,
  body: z.infer<typeof addSiteBody>,
): Promise<AppSite> {
  const site = siteConfigSchema.parse({
    domain: body.domain,
    timezone: body.timezone,
    account,
    created: new Date(deps.clock()).toISOString(),
  });
  const taken = new ConflictError(
    `${site.domain} cannot be added: it, or a domain it belongs to, is tracked in this Footfall already (or still being deleted).`,
    'domain',
  );
  const claimed = (await deps.sites.listSites()).filter(
    (s) => s.domain === site.domain || site.domain.endsWith(`.${s.domain}`),
  );
  if (claimed.some((s) => s.domain === site.domain && s.account === account))
    throw new ConflictError(`This account tracks ${site.domain} already.`, 'domain');
  if (claimed.some((s) => s.account !== account)) throw taken;
  try {
    return await appSite(deps, await deps.sites.addSite(site));
  } catch (error) {
    // Added at the same moment, or a deletion of the domain still running.
    if (error instanceof AlreadyExistsError) throw taken;
    throw error;
  }
}

/** Changes a site's timezone, attribution model or lookback window; a new model or window credits its payments again. */
export async function updateSite(
  deps: SettingsDeps,
  account: string,
  domain: string,
  changes: z.infer<typeof updateSiteBody>,
): Promise<AppSite> {
  await ownSite(deps, account, domain);
  const updated = await deps.sites.updateSite(domain.toLowerCase(), changes);
  if (changes.attribution !== undefined || changes.lookback_days !== undefined) await deps.recredit(updated);
  return appSite(deps, updated);
}

/** The danger zone's form: the domain typed again, as the confirmation. */
export const deleteSiteBody = z.object({ confirm: z.string('Type the domain to confirm.').trim().toLowerCase() });

/** What `DELETE /api/app/sites/{domain}` answers (202): the site is gone; its data is deleted by the command named. */
export interface SiteDeletionStarted {
  domain: string;
  /** Generations whose items are to be deleted. */
  generations: number;
  /** The command that deletes the data and the archive, and resumes if stopped (`docs/deploy.md`). */
  command: string;
}

/**
 * Deletes a site from the account (the danger zone of Site settings,
 * `docs/app.md`): the SITE item, its provider connections and webhook log go
 * at once, so no report, key, webhook or (after the 30 s site cache) event
 * reaches it any more; its data, every generation and the archive, is
 * deleted by `footfall sites delete <domain>`, which resumes from the
 * deletion recorded here (a function of the app cannot wait out the
 * archive's 26.5-minute delivery fence).
 * @throws NotFoundError (404) when the account owns no such site
 * @throws FieldError (400, field `confirm`) when the typed domain is not the site's
 */
export async function deleteAppSite(
  deps: Pick<SettingsDeps, 'sites' | 'deletions' | 'clock'>,
  account: string,
  domain: string,
  body: z.infer<typeof deleteSiteBody>,
): Promise<SiteDeletionStarted> {
  const site = await ownSite(deps, account, domain);
  if (body.confirm !== site.domain) throw new FieldError('confirm', `Type ${site.domain} to confirm.`);
  const { deletion } = await beginSiteDeletion(
    { sites: deps.sites, store: deps.deletions, clock: deps.clock },
    site.domain,
  );
  return {
    domain: site.domain,
    generations: deletion.generations.length,
    command: `footfall sites delete ${site.domain} --yes`,
  };
}

// ---- Payment providers ---------------------------------------------------------

/** A provider as the site's settings show it; never the secret. */
export interface ProviderView {
  provider: Provider;
  connected: boolean;
  webhook_url: string;
  connected_at: string | null;
  /** The last delivery that passed the signature check, whatever its result. */
  last_webhook: WebhookStatus | null;
  /** Deliveries refused for their signature (anyone can post to the URL), counted apart so they cannot hide the last real one. */
  rejected_webhooks: RejectedWebhooks | null;
}

export const connectBody = z.object({
  webhook_secret: z
    .string('Paste the signing secret.')
    .trim()
    .min(8, 'A signing secret has at least 8 characters.')
    .max(512, 'A signing secret has at most 512 characters.'),
});

export const providerParam = z.enum(PROVIDERS);

/** The path providers post a site's webhooks to (`POST /api/webhooks/{provider}/{domain}`). */
export const webhookPath = (provider: Provider, domain: string) => `/api/webhooks/${provider}/${domain}`;

/** The four providers of a site, connected or not, with the webhook URL on `baseUrl`, the last verified webhook and the count of refused ones. */
export async function listProviders(
  deps: Pick<SettingsDeps, 'sites' | 'providers' | 'webhooks'>,
  account: string,
  domain: string,
  baseUrl: string,
): Promise<{ providers: ProviderView[] }> {
  const site = await ownSite(deps, account, domain);
  const [connected, log] = await Promise.all([
    deps.providers.listProviders(site.domain),
    deps.webhooks.webhookLog(site.domain),
  ]);
  const when = new Map(connected.map((c) => [c.provider, c.connected]));
  return {
    providers: PROVIDERS.map((p) => ({
      provider: p,
      connected: when.has(p),
      webhook_url: `${baseUrl}${webhookPath(p, site.domain)}`,
      connected_at: when.get(p) ?? null,
      last_webhook: log.last.get(p) ?? null,
      rejected_webhooks: log.rejected.get(p) ?? null,
    })),
  };
}

/** Stores (or replaces) a provider's signing secret for the site. */
export async function connectProvider(
  deps: Pick<SettingsDeps, 'sites' | 'providers' | 'webhooks' | 'clock'>,
  account: string,
  domain: string,
  provider: Provider,
  secret: string,
  baseUrl: string,
): Promise<ProviderView> {
  if (provider === 'stripe' && !secret.startsWith(STRIPE_SECRET_PREFIX))
    throw new FieldError(
      'webhook_secret',
      `A Stripe signing secret starts with ${STRIPE_SECRET_PREFIX}: copy it from Developers › Webhooks › your endpoint › Signing secret (not an API key).`,
    );
  const site = await ownSite(deps, account, domain);
  await deps.providers.connectProvider(site.domain, provider, secret, new Date(deps.clock()));
  const { providers } = await listProviders(deps, account, domain, baseUrl);
  return providers.find((p) => p.provider === provider)!;
}

/** Forgets a provider's secret: its webhooks are refused (404) from the next one. */
export async function disconnectProvider(
  deps: Pick<SettingsDeps, 'sites' | 'providers'>,
  account: string,
  domain: string,
  provider: Provider,
): Promise<void> {
  const site = await ownSite(deps, account, domain);
  await deps.providers.disconnectProvider(site.domain, provider);
}

// ---- API keys ----------------------------------------------------------------------

export interface KeyView {
  id: string;
  name: string;
  created: string;
  last_used: string | null;
}

export const createKeyBody = z.object({
  name: z.string('Give the key a name.').trim().min(1, 'Give the key a name.').max(100, 'At most 100 characters.'),
});

const keyView = (k: ApiKeyInfo): KeyView => ({
  id: k.id,
  name: k.name ?? '',
  created: k.created,
  last_used: k.last_used,
});

/** The account's keys that still work, newest first. */
export async function listKeys(deps: Pick<SettingsDeps, 'keys'>, account: string): Promise<{ keys: KeyView[] }> {
  const keys = (await deps.keys.list()).filter((k) => k.account === account && !k.revoked);
  keys.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
  return { keys: keys.map(keyView) };
}

/** Creates a key for the account; the answer is the only time the key exists in clear (`docs/security.md` "API keys"). */
export async function createKey(
  deps: Pick<SettingsDeps, 'keys' | 'clock'>,
  account: string,
  name: string,
): Promise<KeyView & { key: string }> {
  const created = await deps.keys.create(account, name, new Date(deps.clock()));
  return { ...keyView(created), key: created.key };
}

/** Revokes one of the account's keys: its next request gets 401. Another account's key is as unknown as none (404). */
export async function revokeKey(
  deps: Pick<SettingsDeps, 'keys' | 'clock'>,
  account: string,
  id: string,
): Promise<void> {
  const key = /^key_[0-9a-f]{12}$/.test(id) ? await deps.keys.info(id) : null;
  if (!key || key.account !== account || key.revoked) throw new NotFoundError(`no API key ${id}`);
  await deps.keys.revoke(id, new Date(deps.clock()));
}

// ---- Users -----------------------------------------------------------------------------

export const emailSchema = z
  .email('Enter an email address such as ana@example.com.')
  .max(254, 'At most 254 characters.')
  .transform(normalizeEmail);
export const inviteBody = z.object({
  email: z.string('Enter an email address.').trim().pipe(emailSchema),
  role: roleSchema.default('member'),
});
export const roleBody = z.object({ role: roleSchema });

/** The account's users, active (password set) or invited, with their roles. */
export async function listUsers(deps: Pick<SettingsDeps, 'users'>, account: string): Promise<{ users: Member[] }> {
  return { users: await deps.users.members(account) };
}

/**
 * Adds a user to the account with `role` and makes their one-time set-password link
 * (shown to the inviter, who sends it: Footfall sends no email).
 * @throws ConflictError (409, field `email`) when the email has a user already: in another
 * account, an answer that does not say which (`docs/security.md`, "One domain, one account")
 */
export async function inviteUser(
  deps: Pick<SettingsDeps, 'users' | 'clock'>,
  account: string,
  body: z.infer<typeof inviteBody>,
): Promise<{ email: string; role: Role; token: string }> {
  const user = await deps.users.add(body.email, account, new Date(deps.clock()), body.role).catch(async (error) => {
    if (!(error instanceof ConflictError)) throw error;
    const holder = await deps.users.get(body.email);
    throw holder?.account === account
      ? new ConflictError(`${body.email} is a user of this account already.`, 'email')
      : new ConflictError(
          `${body.email} cannot be invited: the address has a Footfall user (a user belongs to one account). Invite another address.`,
          'email',
        );
  });
  return { email: user.email, role: user.role, token: await createInvite(deps, user) };
}

/**
 * Makes `email` become `next` (a role, or removed from the account) under the account's role
 * lock, after checking, on a consistent read of the account's users, that the account keeps an
 * owner and that `actor` (the signed-in owner; null for the CLI) is still one of its owners.
 */
async function changeMember(
  deps: Pick<SettingsDeps, 'users' | 'clock'>,
  account: string,
  actor: string | null,
  email: string,
  next: Role | 'removed',
  apply: (user: Pick<User, 'email' | 'account'>) => Promise<void>,
): Promise<void> {
  const target = normalizeEmail(email);
  await deps.users.withRoleLock(account, deps.clock(), async () => {
    const members = await deps.users.members(account);
    if (actor !== null && !members.some((m) => m.email === actor && m.role === 'owner'))
      throw new ForbiddenError(OWNERS_ONLY);
    if (!members.some((m) => m.email === target)) throw new NotFoundError(`no user ${target}`);
    if (!keepsAnOwner(members, target, next))
      throw new ConflictError(
        `${target} is the account's last owner: make another user an owner first.`,
        next === 'removed' ? undefined : 'role',
      );
    await apply({ email: target, account });
  });
}

/** What a member is told when they try what only an owner may do (`docs/security.md`, "Roles"). */
export const OWNERS_ONLY = 'Only an owner of the account can do this.';

/**
 * Removes a user of the account: their sessions fail from the next request.
 * @throws ForbiddenError (403) for oneself, or when `self` is no longer an owner
 * @throws NotFoundError (404) for a user of another account
 * @throws ConflictError (409) for the last owner, or while another change of roles is under way
 */
export async function removeUser(
  deps: Pick<SettingsDeps, 'users' | 'clock'>,
  account: string,
  self: string,
  email: string,
): Promise<void> {
  if (normalizeEmail(email) === self)
    throw new ForbiddenError('You cannot remove yourself; ask another owner of the account.');
  await changeMember(deps, account, self, email, 'removed', (user) => deps.users.remove(user));
}

/**
 * Sets the role of a user of the account (an owner may demote themselves while another owner remains).
 * `actor` is the signed-in owner, or null for the CLI.
 * @throws ForbiddenError (403) when `actor` is no longer an owner
 * @throws NotFoundError (404) for a user of another account
 * @throws ConflictError (409, field `role`) when the account would keep no owner
 */
export async function setUserRole(
  deps: Pick<SettingsDeps, 'users' | 'clock'>,
  account: string,
  actor: string | null,
  email: string,
  role: Role,
): Promise<Member> {
  await changeMember(deps, account, actor, email, role, async (user) => {
    if (!(await deps.users.setRole(user, role))) throw new NotFoundError(`no user ${user.email}`);
  });
  const member = (await deps.users.members(account)).find((m) => m.email === normalizeEmail(email));
  if (!member) throw new NotFoundError(`no user ${email}`);
  return member;
}
