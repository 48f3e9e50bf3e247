import * as z from 'zod';
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  BadParameterError,
  FieldError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
} from '../domain/errors.js';
import {
  clearedSessionCookie,
  cookieIsSecure,
  sessionCookie,
  sessionTokenOf,
  type CookieSecurity,
} from '../domain/auth/cookie.js';
import { originProblem } from '../domain/auth/origin.js';
import { PASSWORD_MAX } from '../domain/auth/password.js';
import { roleAllows } from '../domain/auth/role.js';
import {
  acceptInvite,
  changePassword,
  invitePath,
  inviteInfo,
  sessionOf,
  signIn,
  signOut,
  type AuthDeps,
  type NewSession,
  type SignedIn,
} from '../services/auth.js';
import {
  addSite,
  addSiteBody,
  connectBody,
  connectProvider,
  createKey,
  createKeyBody,
  disconnectProvider,
  inviteBody,
  inviteUser,
  listAppSites,
  listKeys,
  listProviders,
  listUsers,
  providerParam,
  removeUser,
  revokeKey,
  roleBody,
  setUserRole,
  OWNERS_ONLY,
  ownSite,
  updateSite,
  updateSiteBody,
  type SettingsDeps,
  deleteAppSite,
  deleteSiteBody,
} from '../services/account-settings.js';
import { emailReportsBody, emailReportsView, setEmailReports, unsubscribe } from '../services/email-report-settings.js';
import type { EmailReportStore } from '../services/email-reports.js';
import type { User } from '../domain/auth/accounts.js';
import {
  createShareLink,
  listShareLinks,
  openShareLink,
  revokeShareLink,
  type OpenShareDeps,
} from '../services/share-links.js';
import { createShareBody, openShareBody, shareCookie } from '../domain/share-link.js';
import { appErasureStatus, requestAppErasure } from '../services/app-erasures.js';
import {
  appImportStatus,
  importBody,
  importsOf,
  startAppImport,
  type AppImportDeps,
  type ImportBody,
} from '../services/app-imports.js';
import { eraseBody, type EraseBody } from '../services/erasure-requests.js';
import type { Telemetry } from '../observability/telemetry.js';
import { ORIGIN_SECRET_HEADER, VIEWER_ADDRESS_HEADER } from '../domain/client-address.js';
import { bodyText, httpHandler, type HttpEvent, type HttpHandler, type HttpResult } from './http.js';

export interface AppHandlerDeps extends Telemetry {
  auth: AuthDeps;
  settings: SettingsDeps;
  /** Shared links: their store, and the attempt counters a protected link's password is limited by. */
  shares: OpenShareDeps;
  /**
   * Email reports (`docs/app.md`, "Email reports"): the recipients' store and the verified sender
   * (`-c reportSender=`), null while none is configured (reports off). Absent: the routes answer 404.
   */
  emailReports?: { store: EmailReportStore; from: string | null };
  /** Provider history imports (`docs/payments.md`, "Importing a provider's history"); absent: their routes answer 404. */
  imports?: AppImportDeps;
  /** `always` in AWS (HTTPS); `local` on the local server (see `cookieIsSecure`). */
  cookieSecurity: CookieSecurity;
  /** The app's public URL when it is not the request's host (a CloudFront domain or a custom one), e.g. `https://stats.example.com`. */
  publicUrl?: string;
  /**
   * The value CloudFront sends in `ORIGIN_SECRET_HEADER` (AWS, app mode): a request that carries it came through the
   * distribution, and only then is the client's address taken from `CloudFront-Viewer-Address`. Undefined (the local
   * server): that header is never trusted.
   */
  originSecret?: string;
  /**
   * What this deployment answers that another may not, told to the app with who is signed in and with an opened
   * shared link (`docs/app.md`, "What the deployment answers"): `filtered_reports` when the report and MCP functions
   * have the filtered engine (locally always; in AWS unless `-c filteredReports=false`, `docs/deploy.md`).
   */
  capabilities: Capabilities;
}

/** The deployment's capabilities as the app reads them (`GET /api/app/me`, `POST /api/app/shared`). */
export interface Capabilities {
  /** Whether `/api/v1` answers `filters` and the properties reports, or a 400 (`docs/api.md`, "Filters"). */
  filtered_reports: boolean;
}

/** Bodies of app requests are small forms; anything larger is refused before parsing. */
const MAX_BODY_BYTES = 16 * 1024;

interface Request {
  event: HttpEvent;
  params: string[];
  body: unknown;
  signedIn: SignedIn | null;
  baseUrl: string;
}

/** What a route answers: a status, a JSON body, a new session to set or `clear` to end it, and any other cookie to set. */
interface Reply {
  status: number;
  body?: unknown;
  session?: NewSession | 'clear';
  cookie?: string;
}

type Access = 'public' | 'user' | 'owner';

interface AppRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  pattern: RegExp;
  /**
   * Who may use it: anyone (`public`), any signed-in user (`user`, 401 otherwise), or a signed-in
   * owner of the account (`owner`, 403 for a member: `docs/security.md`, "Roles").
   */
  access: Access;
  /**
   * Authorized by a signed token in its path, not by the session cookie: no origin check, since
   * mail providers POST one-click unsubscribes (RFC 8058) from their own servers, with no `Origin`.
   */
  tokenInPath?: true;
  body?: z.ZodType;
  run(deps: AppHandlerDeps, req: Request): Promise<Reply>;
}

const me = (d: AppHandlerDeps, user: User) => ({
  user: { email: user.email, created: user.created, role: user.role },
  account: { id: user.account, name: user.account },
  capabilities: d.capabilities,
});
const ok = (body: unknown, status = 200): Reply => ({ status, body });
const noContent: Reply = { status: 204 };
/** The signed-in user of a route that is not `public` (the router has checked it). */
const who = (req: Request) => req.signedIn as SignedIn;
const account = (req: Request) => who(req).user.account;

const signInBody = z.object({
  email: z
    .string('Enter your email address.')
    .trim()
    .min(1, 'Enter your email address.')
    .max(254, 'At most 254 characters.'),
  password: z
    .string('Enter your password.')
    .min(1, 'Enter your password.')
    .max(PASSWORD_MAX, `At most ${PASSWORD_MAX} characters.`),
});
const passwordBody = z.object({
  current_password: z.string('Enter your current password.').min(1, 'Enter your current password.').max(PASSWORD_MAX),
  new_password: z.string('Enter a new password.'),
});
const acceptBody = z.object({ password: z.string('Enter a password.') });

/** Every `/api/app/*` endpoint (docs/app.md), matched on the raw path; path parameters are percent-decoded. */
const ROUTES: readonly AppRoute[] = [
  { method: 'GET', pattern: /^\/api\/app\/me$/, access: 'user', run: async (d, req) => ok(me(d, who(req).user)) },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sign-in$/,
    access: 'public',
    body: signInBody,
    run: async (d, req) => {
      const { user, session } = await signIn(
        d.auth,
        req.body as z.infer<typeof signInBody>,
        clientAddress(req.event, d.originSecret),
      );
      return { status: 200, body: me(d, user), session };
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sign-out$/,
    access: 'public',
    run: async (d, req) => {
      if (req.signedIn) await signOut(d.auth, req.signedIn);
      return { status: 204, session: 'clear' };
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/password$/,
    access: 'user',
    body: passwordBody,
    run: async (d, req) => ({
      status: 204,
      session: await changePassword(d.auth, who(req), req.body as z.infer<typeof passwordBody>),
    }),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites$/,
    access: 'user',
    run: async (d, req) => ok(await listAppSites(d.settings, account(req))),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sites$/,
    access: 'owner',
    body: addSiteBody,
    run: async (d, req) => ok(await addSite(d.settings, account(req), req.body as z.infer<typeof addSiteBody>), 201),
  },
  {
    method: 'PATCH',
    pattern: /^\/api\/app\/sites\/([^/]+)$/,
    access: 'owner',
    body: updateSiteBody,
    run: async (d, req) =>
      ok(await updateSite(d.settings, account(req), req.params[0]!, req.body as z.infer<typeof updateSiteBody>)),
  },
  {
    method: 'DELETE',
    pattern: /^\/api\/app\/sites\/([^/]+)$/,
    access: 'owner',
    body: deleteSiteBody,
    run: async (d, req) =>
      ok(
        await deleteAppSite(d.settings, account(req), req.params[0]!, req.body as z.infer<typeof deleteSiteBody>),
        202,
      ),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites\/([^/]+)\/erasures$/,
    // Counts and progress only, no id of anyone: readable by members as every other GET.
    access: 'user',
    run: async (d, req) => ok(await appErasureStatus(d.settings, account(req), req.params[0]!)),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sites\/([^/]+)\/erasures$/,
    access: 'owner',
    body: eraseBody,
    run: async (d, req) => {
      const view = await requestAppErasure(d.settings, account(req), req.params[0]!, req.body as EraseBody);
      // The audit line: who asked, for which site, which request; never the person's id.
      d.logger.info('erasure requested', {
        site: req.params[0]!.toLowerCase(),
        request: view.id,
        kind: view.kind,
        by: who(req).user.email,
      });
      return ok(view, 202);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites\/([^/]+)\/providers$/,
    access: 'user',
    run: async (d, req) => ok(await listProviders(d.settings, account(req), req.params[0]!, req.baseUrl)),
  },
  {
    method: 'PUT',
    pattern: /^\/api\/app\/sites\/([^/]+)\/providers\/([^/]+)$/,
    access: 'owner',
    body: connectBody,
    run: async (d, req) =>
      ok(
        await connectProvider(
          d.settings,
          account(req),
          req.params[0]!,
          provider(req.params[1]),
          (req.body as z.infer<typeof connectBody>).webhook_secret,
          req.baseUrl,
        ),
      ),
  },
  {
    method: 'DELETE',
    pattern: /^\/api\/app\/sites\/([^/]+)\/providers\/([^/]+)$/,
    access: 'owner',
    run: async (d, req) => (
      await disconnectProvider(d.settings, account(req), req.params[0]!, provider(req.params[1])),
      noContent
    ),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites\/([^/]+)\/imports\/([^/]+)$/,
    // Counts and errors only, never the key: readable by members as every other GET.
    access: 'user',
    run: async (d, req) =>
      ok(
        await appImportStatus(
          { ...d.settings, imports: importsOf(d.imports) },
          account(req),
          req.params[0]!,
          provider(req.params[1]),
        ),
      ),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sites\/([^/]+)\/imports\/([^/]+)$/,
    access: 'owner',
    body: importBody,
    run: async (d, req) =>
      ok(
        {
          job: await startAppImport(
            { ...d.settings, imports: importsOf(d.imports) },
            account(req),
            req.params[0]!,
            provider(req.params[1]),
            req.body as ImportBody,
            who(req).user.email,
          ),
        },
        202,
      ),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites\/([^/]+)\/shares$/,
    access: 'user',
    run: async (d, req) => ok(await listShareLinks(d.shares, account(req), req.params[0]!)),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/sites\/([^/]+)\/shares$/,
    access: 'owner',
    body: createShareBody,
    run: async (d, req) => {
      const { path, ...link } = await createShareLink(
        d.shares,
        account(req),
        req.params[0]!,
        req.body as z.output<typeof createShareBody>,
      );
      return ok({ ...link, url: `${req.baseUrl}${path}` }, 201);
    },
  },
  {
    method: 'DELETE',
    pattern: /^\/api\/app\/sites\/([^/]+)\/shares\/([^/]+)$/,
    access: 'owner',
    run: async (d, req) => (await revokeShareLink(d.shares, account(req), req.params[0]!, req.params[1]!), noContent),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/shared$/,
    access: 'public',
    body: openShareBody,
    run: async (d, req) => {
      const { opened, unlock } = await openShareLink(
        d.shares,
        req.body as z.output<typeof openShareBody>,
        clientAddress(req.event, d.originSecret),
      );
      const secure = cookieIsSecure(d.cookieSecurity, req.event.headers?.['x-forwarded-proto']);
      const cookie = unlock
        ? shareCookie(unlock.id, opened.site.domain, unlock.token, (unlock.expires - d.shares.clock()) / 1000, secure)
        : undefined;
      return { status: 200, body: { ...opened, capabilities: d.capabilities }, cookie };
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/sites\/([^/]+)\/email-reports$/,
    access: 'user',
    run: async (d, req) => {
      const { store, from } = emailReportsOf(d);
      const site = await ownSite(d.settings, account(req), req.params[0]!);
      return ok(await emailReportsView(store, from, site.domain));
    },
  },
  {
    method: 'PUT',
    pattern: /^\/api\/app\/sites\/([^/]+)\/email-reports$/,
    access: 'owner',
    body: emailReportsBody,
    run: async (d, req) => {
      const { store, from } = emailReportsOf(d);
      const site = await ownSite(d.settings, account(req), req.params[0]!);
      const body = req.body as z.infer<typeof emailReportsBody>;
      return ok(await setEmailReports(store, from, site.domain, body, d.settings.clock()));
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/unsubscribe\/([^/]+)$/,
    access: 'public',
    tokenInPath: true,
    run: async (d, req) => ok(await unsubscribe(emailReportsOf(d).store, req.params[0]!, d.settings.clock())),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/keys$/,
    access: 'user',
    run: async (d, req) => ok(await listKeys(d.settings, account(req))),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/keys$/,
    access: 'owner',
    body: createKeyBody,
    run: async (d, req) =>
      ok(await createKey(d.settings, account(req), (req.body as z.infer<typeof createKeyBody>).name), 201),
  },
  {
    method: 'DELETE',
    pattern: /^\/api\/app\/keys\/([^/]+)$/,
    access: 'owner',
    run: async (d, req) => (await revokeKey(d.settings, account(req), req.params[0]!), noContent),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/users$/,
    access: 'user',
    run: async (d, req) => ok(await listUsers(d.settings, account(req))),
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/users$/,
    access: 'owner',
    body: inviteBody,
    run: async (d, req) => {
      const { email, role, token } = await inviteUser(d.settings, account(req), req.body as z.infer<typeof inviteBody>);
      return ok({ email, role, invite_url: `${req.baseUrl}${invitePath(token)}` }, 201);
    },
  },
  {
    method: 'PATCH',
    pattern: /^\/api\/app\/users\/([^/]+)$/,
    access: 'owner',
    body: roleBody,
    run: async (d, req) =>
      ok(
        await setUserRole(
          d.settings,
          account(req),
          who(req).user.email,
          req.params[0]!,
          (req.body as z.infer<typeof roleBody>).role,
        ),
      ),
  },
  {
    method: 'DELETE',
    pattern: /^\/api\/app\/users\/([^/]+)$/,
    access: 'owner',
    run: async (d, req) => (await removeUser(d.settings, account(req), who(req).user.email, req.params[0]!), noContent),
  },
  {
    method: 'GET',
    pattern: /^\/api\/app\/invites\/([^/]+)$/,
    access: 'public',
    run: async (d, req) => {
      const invite = await inviteInfo(d.auth, req.params[0]!);
      return ok({ email: invite.email, account: { id: invite.account, name: invite.account } });
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/app\/invites\/([^/]+)$/,
    access: 'public',
    body: acceptBody,
    run: async (d, req) => {
      const { user, session } = await acceptInvite(
        d.auth,
        req.params[0]!,
        (req.body as z.infer<typeof acceptBody>).password,
      );
      return { status: 200, body: me(d, user), session };
    },
  },
];

/** Each app endpoint's method, path pattern and who may use it (the role table of `docs/security.md`). */
export const APP_ROUTE_ACCESS: ReadonlyArray<{ method: AppRoute['method']; pattern: RegExp; access: Access }> =
  ROUTES.map(({ method, pattern, access }) => ({ method, pattern, access }));

function emailReportsOf(deps: AppHandlerDeps): NonNullable<AppHandlerDeps['emailReports']> {
  if (!deps.emailReports) throw new NotFoundError('not found');
  return deps.emailReports;
}

function provider(value: string | undefined) {
  const parsed = providerParam.safeParse(value);
  if (!parsed.success) throw new NotFoundError(`unknown provider ${value ?? ''}`);
  return parsed.data;
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new BadParameterError('path', 'is not valid percent-encoding');
  }
};

/**
 * The client's address, for the per-address sign-in limit: API Gateway's
 * source IP (the local server's peer); in AWS, CloudFront's
 * `CloudFront-Viewer-Address` (`ip:port`) when the request came through the
 * distribution, since the source IP is then CloudFront's. Through the
 * distribution means `ORIGIN_SECRET_HEADER` equals `originSecret` (compared
 * in constant time): on the public execute-api URL a client could set the
 * viewer address itself and escape the limit. Without `originSecret` (the
 * local server) that header is never trusted.
 */
export function clientAddress(event: HttpEvent, originSecret: string | undefined): string {
  const viewer = event.headers?.[VIEWER_ADDRESS_HEADER];
  if (viewer && originSecret && sameSecret(event.headers?.[ORIGIN_SECRET_HEADER], originSecret))
    return viewer.replace(/:\d+$/, '');
  return event.requestContext.http.sourceIp;
}

/** Whether `sent` equals `secret`, in time independent of where they differ (both hashed to one length first). */
function sameSecret(sent: string | undefined, secret: string): boolean {
  if (sent === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(sent), digest(secret));
}

const originOf = (value: string | undefined): string | null => {
  try {
    const url = new URL(value ?? '');
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
  } catch {
    return null;
  }
};

/**
 * Hosts the request may come from (the CSRF check), and the base URL of the
 * links and webhook URLs it answers: the configured public URL; else the
 * forwarded host; else, since behind CloudFront the `Host` is the API's own,
 * the app origin the browser names in `Origin` (writes, which passed the
 * origin check) or `Referer` (same-origin reads); else the `Host`.
 */
function hostsOf(deps: AppHandlerDeps, event: HttpEvent): { hosts: string[]; baseUrl: string } {
  const h = event.headers ?? {};
  const forwarded = h['x-forwarded-host']?.split(',')[0]?.trim();
  const hosts = [h.host, forwarded].filter((x): x is string => !!x);
  if (deps.publicUrl) {
    const url = new URL(deps.publicUrl);
    return { hosts: [...hosts, url.host], baseUrl: url.origin };
  }
  const secure = deps.cookieSecurity === 'always' || h['x-forwarded-proto'] === 'https';
  const fromHost = `${secure ? 'https' : 'http'}://${forwarded ?? h.host ?? 'localhost'}`;
  const viaBrowser = h['sec-fetch-site'] === 'same-origin' ? (originOf(h.origin) ?? originOf(h.referer)) : null;
  return { hosts, baseUrl: forwarded ? fromHost : (viaBrowser ?? fromHost) };
}

function parseBody(schema: z.ZodType, event: HttpEvent): unknown {
  const text = bodyText(event) ?? '';
  if (Buffer.byteLength(text) > MAX_BODY_BYTES)
    throw new BadParameterError('body', `is larger than ${MAX_BODY_BYTES} bytes`);
  let json: unknown;
  try {
    json = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw new BadParameterError('body', 'must be a JSON object');
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? String(issue.path[0]) : 'body';
  throw new FieldError(
    field,
    issue?.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : (issue?.message ?? 'not valid'),
  );
}

/**
 * The app's endpoints (`/api/app/*`, docs/app.md): sign-in, sessions and
 * account settings, authenticated by the `ff_session` cookie. Every write
 * passes the origin check first (403), then the session (401), then the
 * role (403 for a member on an owner's route), then its body (400
 * `{error, field}`); answers are JSON and never cached.
 */
export function createAppHandler(deps: AppHandlerDeps): HttpHandler {
  const { logger } = deps;
  return httpHandler(
    async (event: HttpEvent): Promise<HttpResult> => {
      const method = event.requestContext.http.method.toUpperCase();
      const path = event.rawPath.replace(/\/+$/, '');
      const matching = ROUTES.filter((r) => r.pattern.test(path));
      const route = matching.find((r) => r.method === method);
      if (!route)
        throw matching.length > 0 ? new MethodNotAllowedError('method not allowed') : new NotFoundError('not found');
      const { hosts, baseUrl } = hostsOf(deps, event);
      const problem = originProblem({
        method,
        origin: event.headers?.origin,
        secFetchSite: event.headers?.['sec-fetch-site'],
        hosts,
      });
      if (problem && !route.tokenInPath) throw new ForbiddenError(`Refused: ${problem}.`);
      const secure = cookieIsSecure(deps.cookieSecurity, event.headers?.['x-forwarded-proto']);
      const token = sessionTokenOf(event.cookies, event.headers?.cookie);
      const signedIn = token ? await sessionOf(deps.auth, token) : null;
      if (route.access !== 'public' && !signedIn) {
        return withCookie(errorJson(401, 'Sign in first.'), token ? clearedSessionCookie(secure) : undefined);
      }
      if (route.access === 'owner' && !roleAllows(signedIn!.user.role, 'owner')) throw new ForbiddenError(OWNERS_ONLY);
      const body = route.body ? parseBody(route.body, event) : undefined;
      const reply = await route.run(deps, {
        event,
        params: (route.pattern.exec(path) ?? []).slice(1).map(decode),
        body,
        signedIn,
        baseUrl,
      });
      const cookie =
        reply.session === 'clear'
          ? clearedSessionCookie(secure)
          : reply.session
            ? sessionCookie(reply.session.token, (reply.session.expires - deps.auth.clock()) / 1000, secure)
            : undefined;
      const result: HttpResult =
        reply.status === 204
          ? { statusCode: 204, headers: { 'cache-control': 'no-store' } }
          : {
              statusCode: reply.status,
              headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
              body: JSON.stringify(reply.body),
            };
      return withCookie(withCookie(result, cookie), reply.cookie);
    },
    { logger, errors: { format: 'json', unexpectedStatus: 503 } },
  );
}

function errorJson(status: number, error: string): HttpResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify({ error }),
  };
}

function withCookie(result: HttpResult, cookie: string | undefined): HttpResult {
  return cookie ? { ...result, cookies: [...(result.cookies ?? []), cookie] } : result;
}
