/**
 * The app's only door to the server: JSON over same-origin fetch with the
 * session cookie (`ff_session`, set HttpOnly by the server). Numbers come only
 * from `/api/v1` (the report API, `docs/api.md`), so the app can never disagree with
 * the API or MCP; account writes go to `/api/app/*` (docs/app.md). The
 * reports' paths, parameter names and bodies come from the server's report
 * table, and the shared-link bodies from its service: types only, and the path strings.
 */
import type { ReportBody, ReportName, ReportQuery } from '../../lambdas/handlers/report-table.js';
import { REPORT_PATHS, fillPath, type PathNames } from '../../lambdas/handlers/report-paths.js';
import type { OpenedShare as OpenedLink, ShareView } from '../../lambdas/services/share-links.js';
import type { Capabilities } from '../../lambdas/handlers/app.js';

/** An error answer (`{error, field?}`, `docs/api.md` "Errors") or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field: string | null = null,
  ) {
    super(message);
  }
}

/** Called on any 401 from the server, so the app can send the user to sign-in. */
let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/**
 * A shared view's link (docs/app.md "Shared links"): its token goes with every
 * report request in `x-footfall-share`, and a 401 then means the link was
 * revoked or locked (`refused`), never a sign-in to ask for.
 */
let shared: { token: string; refused(message: string): void } | null = null;
export function setSharedLink(link: typeof shared): void {
  shared = link;
}

async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  options: { quiet401?: boolean } = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(shared && path.startsWith('/api/v1/') ? { 'x-footfall-share': shared.token } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check your connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const err = (json ?? {}) as { error?: string; field?: string };
    if (res.status === 401 && !options.quiet401) {
      if (shared) shared.refused(err.error ?? 'This shared link no longer works.');
      else onUnauthorized();
    }
    throw new ApiError(
      res.status,
      err.error ??
        (res.status === 429 ? 'Too many attempts. Wait a minute and try again.' : `The server answered ${res.status}.`),
      err.field ?? null,
    );
  }
  return json as T;
}

export const get = <T>(path: string, options?: { quiet401?: boolean }) => request<T>('GET', path, undefined, options);
export const post = <T>(path: string, body: unknown = {}, options?: { quiet401?: boolean }) =>
  request<T>('POST', path, body, options);
export const put = <T>(path: string, body: unknown) => request<T>('PUT', path, body);
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const del = (path: string) => request<void>('DELETE', path);

const enc = encodeURIComponent;

/** Query string from defined values, in the given order. */
export function qs(params: { [name: string]: string | number | null | undefined }): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

// ---- Shapes (`docs/api.md`; app endpoints per docs/app.md) -------------------------

export type Role = 'owner' | 'member';

/** What the deployment answers that another may not (`docs/app.md`, "What the deployment answers"). */
export type { Capabilities };

export interface Me {
  user: { email: string; created?: string; role?: Role };
  account: { id: string; name: string };
  capabilities: Capabilities;
}

// The report API's bodies, derived from the report table's response schemas (lambdas/handlers/report-table.ts).
export type Overview = ReportBody<'overview'>;
export type Range = Overview['range'];
export type Totals = Overview['current'];
/** The fields of the overview's `change` (`docs/api.md` "Overview" and the top stats). */
export type ChangeKey = keyof Overview['change'];
export type Goals = ReportBody<'goals'>;
/** A row of the goals report (docs/api.md "Goals"). */
export type GoalRow = Goals['rows'][number];
/** Current visitors (docs/api.md "Realtime"). */
export type Realtime = ReportBody<'realtime'>;
export type Timeseries = ReportBody<'timeseries'>;
export type Point = Timeseries['points'][number];
export type Interval = Timeseries['interval'];
export type Breakdown = ReportBody<'breakdown'>;
export type BreakdownRow = Breakdown['rows'][number];
/** The custom property keys of a range (docs/api.md "Properties"). */
export type Properties = ReportBody<'properties'>;
export type PropKeyRow = Properties['rows'][number];
export type Payments = ReportBody<'payments'>;
export type PaymentRow = Payments['rows'][number];
export type PaymentFilter = Payments['filter'];
/** The credited visit of a payment (`touch`), or its payer's first visit (`first_touch`, without the optional fields). */
export type Touch = NonNullable<PaymentRow['first_touch']> & Partial<NonNullable<PaymentRow['touch']>>;
export type Retention = ReportBody<'retention'>;
export type RetentionGroup = Retention['total'];
export type Timeline = ReportBody<'visitor'>;
export type TimelineEntry = Timeline['entries'][number];
export type VisitEntry = Extract<TimelineEntry, { type: 'visit' }>;
export type Step = VisitEntry['steps'][number];

/** A provider history import begun in Site settings (`GET|POST /api/app/sites/{domain}/imports/{provider}`): never the key. */
export interface ImportJob {
  provider: ProviderName;
  status: 'running' | 'done' | 'failed';
  /** Running, but not heard from for 20 minutes: starting again takes it over. */
  stalled: boolean;
  since: string | null;
  until: string | null;
  counts: { read: number; imported: number; skipped: number; failed: number };
  invalid: string[];
  error: string | null;
  started: string;
  updated: string;
  by: string;
}

/** Whom an erasure names (`POST /api/app/sites/{domain}/erasures`); `email` is answered 400 with the way to a customer id. */
export type ErasureKind = 'visitor' | 'customer' | 'email';

/** An erasure under way, with no id of the person. */
export interface ErasureView {
  id: string;
  kind: 'visitor' | 'customer';
  requested: string;
  status: 'pending' | 'running';
  phase: string;
  percent: number;
  error: string | null;
}

/** A finished erasure's audit record: counts only. */
export interface ErasureRecord {
  at: string;
  kind: 'visitor' | 'customer';
  visitors: number;
  payments: number;
  customers: number;
  visit_items: number;
  archive_files: number;
  archive_events: number;
  generation: number;
}

export interface ErasureStatus {
  pending: ErasureView[];
  done: ErasureRecord[];
}

/** A site as the account settings see it (`GET /api/app/sites`). */
export interface AppSite {
  domain: string;
  timezone: string;
  attribution: Attribution;
  lookback_days: number;
  created: string;
  last_event_ts: string | null;
}

export type Attribution = 'last_non_direct' | 'last_touch' | 'first_touch';

export interface Provider {
  provider: ProviderName;
  connected: boolean;
  webhook_url: string;
  connected_at: string | null;
  last_webhook: { ts: string; status: number | string; result: string } | null;
  rejected_webhooks: { count: number; last_ts: string } | null;
}

export type ProviderName = 'stripe' | 'lemonsqueezy' | 'paddle' | 'polar';

export interface ApiKey {
  id: string;
  name: string;
  created: string;
  last_used: string | null;
}

/** A shared link as Site settings list it (`GET /api/app/sites/{domain}/shares`), as the server's service answers it. */
export type ShareLink = ShareView;
/** What opening a shared link answers (`POST /api/app/shared`), with what the deployment answers. */
export type OpenedShare = OpenedLink & { capabilities: Capabilities };

export interface AccountUser {
  email: string;
  created: string;
  status: 'active' | 'invited';
  role: Role;
}

// ---- Endpoints ---------------------------------------------------------------

const appSite = (domain: string) => `/api/app/sites/${enc(domain)}`;

/** Range parameters as the report API takes them (`docs/api.md` "Ranges"). */
export type RangeQuery = { range: string } | { from: string; to: string };
/**
 * What a dated report covers: its range and, when the dashboard is filtered,
 * the `filters` parameter (JSON, `docs/api.md` "Filters"; `app/src/filters.ts` makes it).
 */
export type ReportScope = RangeQuery & { filters?: string | undefined };

/**
 * A report's URL: its path from the report table with the path parameters
 * filled in, then the query, whose names are the report's own (a name the
 * report does not take fails to compile).
 */
function reportUrl<N extends ReportName>(
  name: N,
  params: { [K in PathNames<(typeof REPORT_PATHS)[N]>]: string },
  query: { [K in keyof ReportQuery<N>]?: string | number | null } = {},
): string {
  return `${fillPath(REPORT_PATHS[name], params)}${qs(query)}`;
}
const report = <N extends ReportName>(...args: Parameters<typeof reportUrl<N>>) =>
  get<ReportBody<N>>(reportUrl(...args));

export const api = {
  me: () => get<Me>('/api/app/me', { quiet401: true }),
  signIn: (email: string, password: string) => post<Me>('/api/app/sign-in', { email, password }, { quiet401: true }),
  signOut: () => post<void>('/api/app/sign-out'),
  changePassword: (current_password: string, new_password: string) =>
    post<void>('/api/app/password', { current_password, new_password }),

  sites: () => report('sites', {}),
  // `quiet401`: a request started before the session check answered (`early.ts`) leaves a 401 to it.
  overview: (domain: string, range: ReportScope, options?: { quiet401?: boolean }) =>
    get<ReportBody<'overview'>>(reportUrl('overview', { domain }, range), options),
  timeseries: (domain: string, range: ReportScope, interval?: Interval, options?: { quiet401?: boolean }) =>
    get<ReportBody<'timeseries'>>(reportUrl('timeseries', { domain }, { ...range, interval }), options),
  breakdown: (domain: string, dimension: string, range: ReportScope, limit: number) =>
    report('breakdown', { domain, dimension }, { ...range, limit }),
  properties: (domain: string, range: ReportScope, limit: number) =>
    report('properties', { domain }, { ...range, limit }),
  payments: (domain: string, range: ReportScope, filter: PaymentFilter, limit: number, offset: number) =>
    report('payments', { domain }, { ...range, filter, limit, offset }),
  goals: (domain: string, range: ReportScope, goal: string | null, limit: number) =>
    report('goals', { domain }, { ...range, goal, limit }),
  realtime: (domain: string) => report('realtime', { domain }, { limit: 5 }),
  retention: (domain: string, range: ReportScope) => report('retention', { domain }, range),
  visitor: (domain: string, visitor_id: string) => report('visitor', { domain, visitor_id }),

  appSites: () => get<{ sites: AppSite[] }>('/api/app/sites'),
  addSite: (domain: string, timezone: string) => post<AppSite>('/api/app/sites', { domain, timezone }),
  updateSite: (domain: string, change: Partial<Pick<AppSite, 'timezone' | 'attribution' | 'lookback_days'>>) =>
    patch<AppSite>(appSite(domain), change),
  /** The danger zone: `confirm` is the domain typed again; the data is then deleted by the command answered. */
  deleteSite: (domain: string, confirm: string) =>
    request<{ domain: string; generations: number; command: string }>('DELETE', appSite(domain), { confirm }),
  providers: (domain: string) => get<{ providers: Provider[] }>(`${appSite(domain)}/providers`),
  erasures: (domain: string) => get<ErasureStatus>(`${appSite(domain)}/erasures`),
  /** Queues an erasure; `confirm` is the domain typed again. */
  erase: (domain: string, kind: ErasureKind, id: string, confirm: string) =>
    post<ErasureView>(`${appSite(domain)}/erasures`, { kind, id, confirm }),
  importJob: (domain: string, provider: ProviderName) =>
    get<{ job: ImportJob | null }>(`${appSite(domain)}/imports/${provider}`),
  /** Starts (or resumes) an import of the provider's history; `since`/`until` are days (YYYY-MM-DD) or empty. */
  startImport: (domain: string, provider: ProviderName, body: { api_key: string; since: string; until: string }) =>
    post<{ job: ImportJob }>(`${appSite(domain)}/imports/${provider}`, body),
  connectProvider: (domain: string, provider: ProviderName, webhook_secret: string) =>
    put<Provider>(`${appSite(domain)}/providers/${provider}`, { webhook_secret }),
  disconnectProvider: (domain: string, provider: ProviderName) => del(`${appSite(domain)}/providers/${provider}`),

  shares: (domain: string) => get<{ links: ShareLink[] }>(`${appSite(domain)}/shares`),
  /** A new link; its `url` (with the token) is the only time it is shown. */
  createShare: (domain: string, name: string, password: string) =>
    post<ShareLink & { url: string }>(`${appSite(domain)}/shares`, { name, ...(password ? { password } : {}) }),
  revokeShare: (domain: string, id: string) => del(`${appSite(domain)}/shares/${enc(id)}`),
  openShared: (token: string, password?: string) =>
    post<OpenedShare>('/api/app/shared', { token, password }, { quiet401: true }),

  keys: () => get<{ keys: ApiKey[] }>('/api/app/keys'),
  createKey: (name: string) => post<ApiKey & { key: string }>('/api/app/keys', { name }),
  revokeKey: (id: string) => del(`/api/app/keys/${enc(id)}`),

  users: () => get<{ users: AccountUser[] }>('/api/app/users'),
  inviteUser: (email: string, role: Role) =>
    post<{ email: string; role: Role; invite_url: string }>('/api/app/users', { email, role }),
  setRole: (email: string, role: Role) => patch<AccountUser>(`/api/app/users/${enc(email)}`, { role }),
  removeUser: (email: string) => del(`/api/app/users/${enc(email)}`),

  invite: (token: string) =>
    get<{ email: string; account: string | { id: string; name: string } }>(`/api/app/invites/${enc(token)}`, {
      quiet401: true,
    }),
  acceptInvite: (token: string, password: string) =>
    post<Me>(`/api/app/invites/${enc(token)}`, { password }, { quiet401: true }),
};

/**
 * The CSV download of a report (docs/api.md "CSV export"): the same path and
 * parameters as its JSON with `format=csv`; the browser sends the session
 * cookie and saves the file under the server's Content-Disposition name.
 */
export const csvHref = {
  breakdown: (domain: string, dimension: string, range: ReportScope, limit: number) =>
    reportUrl('breakdown', { domain, dimension }, { ...range, limit, format: 'csv' }),
  payments: (domain: string, range: ReportScope, filter: PaymentFilter, limit: number, offset: number) =>
    reportUrl('payments', { domain }, { ...range, filter, limit, offset, format: 'csv' }),
  goals: (domain: string, range: ReportScope, goal: string | null, limit: number) =>
    reportUrl('goals', { domain }, { ...range, goal, limit, format: 'csv' }),
};
