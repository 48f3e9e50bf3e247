/**
 * The app's only door to the server: JSON over same-origin fetch with the
 * session cookie (`ff_session`, set HttpOnly by the server). Numbers come only
 * from `/api/v1` (the report API, spec §4), so the app can never disagree with
 * the API or MCP; account writes go to `/api/app/*` (docs/app.md).
 */

/** An error answer (`{error, field?}`, spec §7) or a network failure (status 0). */
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
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
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
    if (res.status === 401 && !options.quiet401) onUnauthorized();
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
export function qs(params: Record<string, string | number | null | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

// ---- Shapes (spec §2; app endpoints per docs/app.md) -------------------------

export type Role = 'owner' | 'member';

export interface Me {
  user: { email: string; created?: string; role?: Role };
  account: { id: string; name: string };
}

export interface Range {
  from: string;
  to: string;
  timezone: string;
}

export interface Totals {
  visitors: number;
  sessions: number;
  payments: number;
  customers: number;
  revenue_usd: number;
  converted: number;
  matched_payments: number;
  matched_revenue_usd: number;
  conversion: number | null;
  revenue_per_visitor: number | null;
  pageviews: number;
  views_per_visit: number | null;
  bounce_rate: number | null;
  /** Mean seconds of visits with more than one event (docs/api.md "Top stats"). */
  visit_duration: number | null;
}

/** The fields of the overview's `change` (spec §2.4 and the top stats). */
export type ChangeKey =
  | 'visitors'
  | 'revenue_usd'
  | 'payments'
  | 'conversion'
  | 'revenue_per_visitor'
  | 'sessions'
  | 'pageviews'
  | 'views_per_visit'
  | 'bounce_rate'
  | 'visit_duration';

/** A row of the goals report (docs/api.md "Goals"). */
export interface GoalRow {
  goal: string;
  link: string | null;
  other: boolean;
  visitors: number;
  visits: number;
  completions: number;
  conversion_rate: number | null;
  payments: number;
  revenue_usd: number;
}

export interface Goals {
  site: string;
  range: Range;
  goal: string | null;
  visitors: number;
  total: number;
  rows: GoalRow[];
}

/** Current visitors (docs/api.md "Realtime"). */
export interface Realtime {
  site: string;
  as_of: string;
  window_seconds: number;
  visitors: number;
  pages: Array<{ page: string; visitors: number }>;
  referrers: Array<{ referrer: string | null; visitors: number }>;
}

export interface Overview {
  site: string;
  range: Range;
  previous_range: Range;
  current: Totals;
  previous: Totals;
  change: Record<ChangeKey, number | null>;
}

export interface Point {
  start: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  payments: number;
  revenue_usd: number;
}

export type Interval = 'hour' | 'day' | 'month';

export interface Timeseries {
  site: string;
  range: Range;
  interval: Interval;
  points: Point[];
}

export interface BreakdownRow {
  key: string | null;
  label: string;
  unattributed: boolean;
  visitors: number;
  payments: number;
  customers: number;
  revenue_usd: number;
  revenue_per_visitor: number | null;
}

export interface Breakdown {
  site: string;
  range: Range;
  dimension: string;
  total: number;
  rows: BreakdownRow[];
}

export interface Touch {
  session_id?: string;
  ts: string;
  channel: string;
  referrer_host: string | null;
  source: string | null;
  campaign?: string | null;
  landing_page?: string;
  country?: string | null;
  device?: string;
}

export interface PaymentRow {
  provider: string;
  provider_payment_id: string;
  ts: string;
  amount: number;
  currency: string;
  amount_usd: number;
  refunded: number;
  net_usd: number;
  status: string;
  visitor_id: string | null;
  customer_id: string | null;
  is_renewal: boolean;
  visitor: string | null;
  touch: Touch | null;
  first_touch: Touch | null;
}

export type PaymentFilter = 'all' | 'attributed' | 'unattributed' | 'refunded';

export interface Payments {
  site: string;
  range: Range;
  filter: PaymentFilter;
  total: number;
  limit: number;
  offset: number;
  rows: PaymentRow[];
}

export interface RetentionGroup {
  key: string | null;
  label: string;
  unattributed: boolean;
  customers: number;
  still_paying: number;
  first_payment_usd: number;
  refunded_usd: number;
  net_ltv_usd: number;
  avg_ltv_usd: number | null;
  refund_rate: number | null;
  churn_customers: number;
  churned: number;
  churn_30d: number | null;
  share_customers: number | null;
  share_still_paying: number | null;
}

export interface Retention {
  site: string;
  range: Range;
  days_of_data: number;
  day_one: boolean;
  headline: string | null;
  total: RetentionGroup;
  channels: RetentionGroup[];
  referrers: RetentionGroup[];
  campaigns: RetentionGroup[];
  status_sources: Array<{ provider: string; subscription_status: boolean }>;
}

export type Step =
  | { type: 'page'; ts: string; path: string; secs: number | null }
  | { type: 'goal'; ts: string; name: string }
  | { type: 'exit'; ts: string; page: string; link?: string | null }
  | ({ type: 'payment' } & PaymentRow);

export interface VisitEntry {
  type: 'visit';
  start: string;
  end: string;
  channel: string;
  referrer_host: string | null;
  source: string | null;
  campaign: string | null;
  pageviews: number;
  steps: Step[];
}

export type TimelineEntry = VisitEntry | ({ type: 'payment' } & PaymentRow);

export interface Timeline {
  site: string;
  visitor_id: string;
  country: string | null;
  browser: string | null;
  device: string | null;
  entries: TimelineEntry[];
  payments: PaymentRow[];
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

export interface AccountUser {
  email: string;
  created: string;
  status: 'active' | 'invited';
  role: Role;
}

// ---- Endpoints ---------------------------------------------------------------

const site = (domain: string) => `/api/v1/sites/${enc(domain)}`;
const appSite = (domain: string) => `/api/app/sites/${enc(domain)}`;

/** Range parameters as the report API takes them (spec §4.1). */
export type RangeQuery = { range: string } | { from: string; to: string };

export const api = {
  me: () => get<Me>('/api/app/me', { quiet401: true }),
  signIn: (email: string, password: string) => post<Me>('/api/app/sign-in', { email, password }, { quiet401: true }),
  signOut: () => post<void>('/api/app/sign-out'),
  changePassword: (current_password: string, new_password: string) =>
    post<void>('/api/app/password', { current_password, new_password }),

  sites: () => get<{ sites: Array<{ domain: string; timezone: string }> }>('/api/v1/sites'),
  overview: (domain: string, range: RangeQuery) => get<Overview>(`${site(domain)}/overview${qs(range)}`),
  timeseries: (domain: string, range: RangeQuery, interval?: Interval) =>
    get<Timeseries>(`${site(domain)}/timeseries${qs({ ...range, interval })}`),
  breakdown: (domain: string, dimension: string, range: RangeQuery, limit: number) =>
    get<Breakdown>(`${site(domain)}/breakdown/${enc(dimension)}${qs({ ...range, limit })}`),
  payments: (domain: string, range: RangeQuery, filter: PaymentFilter, limit: number, offset: number) =>
    get<Payments>(`${site(domain)}/payments${qs({ ...range, filter, limit, offset })}`),
  goals: (domain: string, range: RangeQuery, goal: string | null, limit: number) =>
    get<Goals>(`${site(domain)}/goals${qs({ ...range, goal, limit })}`),
  realtime: (domain: string) => get<Realtime>(`${site(domain)}/realtime${qs({ limit: 5 })}`),
  retention: (domain: string, range: RangeQuery) => get<Retention>(`${site(domain)}/retention${qs(range)}`),
  visitor: (domain: string, id: string) => get<Timeline>(`${site(domain)}/visitors/${enc(id)}`),

  appSites: () => get<{ sites: AppSite[] }>('/api/app/sites'),
  addSite: (domain: string, timezone: string) => post<AppSite>('/api/app/sites', { domain, timezone }),
  updateSite: (domain: string, change: Partial<Pick<AppSite, 'timezone' | 'attribution' | 'lookback_days'>>) =>
    patch<AppSite>(appSite(domain), change),
  /** The danger zone: `confirm` is the domain typed again; the data is then deleted by the command answered. */
  deleteSite: (domain: string, confirm: string) =>
    request<{ domain: string; generations: number; command: string }>('DELETE', appSite(domain), { confirm }),
  providers: (domain: string) => get<{ providers: Provider[] }>(`${appSite(domain)}/providers`),
  connectProvider: (domain: string, provider: ProviderName, webhook_secret: string) =>
    put<Provider>(`${appSite(domain)}/providers/${provider}`, { webhook_secret }),
  disconnectProvider: (domain: string, provider: ProviderName) => del(`${appSite(domain)}/providers/${provider}`),

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
  breakdown: (domain: string, dimension: string, range: RangeQuery, limit: number) =>
    `${site(domain)}/breakdown/${enc(dimension)}${qs({ ...range, limit, format: 'csv' })}`,
  payments: (domain: string, range: RangeQuery, filter: PaymentFilter, limit: number, offset: number) =>
    `${site(domain)}/payments${qs({ ...range, filter, limit, offset, format: 'csv' })}`,
  goals: (domain: string, range: RangeQuery, goal: string | null, limit: number) =>
    `${site(domain)}/goals${qs({ ...range, goal, limit, format: 'csv' })}`,
};
