import { BadParameterError, NotFoundError, UnauthorizedError } from '../domain/errors.js';
import { DECIMAL_DIGITS, DECIMAL_QUERY_PARAMS } from '../domain/reports/schemas.js';
import { parseAuthorization, type AuthorizationHeader } from '../domain/api-key.js';
import { cookieValue, sessionTokenOf } from '../domain/auth/cookie.js';
import { SHARE_HEADER, shareCookieName } from '../domain/share-link.js';
import { shareAccess, type ShareDeps } from '../services/share-links.js';
import * as z from 'zod';
import { dict } from '../domain/dict.js';
import { formatParam, toCsv } from '../domain/reports/csv.js';
import type { ReportDeps } from '../services/reports.js';
import type { Telemetry } from '../observability/telemetry.js';
import { httpHandler, type HttpEvent, type HttpHandler } from './http.js';
import { openApiDocument } from './openapi.js';
import { REPORT_LIST, type ReportSpec } from './report-table.js';

export interface ReportHandlerDeps extends Omit<ReportDeps, 'store'>, Telemetry {
  /** A report store per request, so that its read cost is one report's. */
  store(): ReportDeps['store'];
  keys: { authenticate(key: string, now: Date): Promise<string | null> };
  /** The account of an app session cookie (`ff_session`), or null (docs/app.md); without it only keys are taken. */
  sessions?: { accountOf(token: string): Promise<string | null> };
  /** Shared links (`x-footfall-share`, docs/security.md "Shared links"); without it a link's token is refused. */
  shares?: ShareDeps;
}

/** Parses query parameters with a schema; a failure is a 400 naming the parameter (`docs/api.md` "Errors"). */
export function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, string | undefined>): T {
  for (const name of DECIMAL_QUERY_PARAMS) {
    const value = query[name];
    if (value !== undefined && !DECIMAL_DIGITS.test(value))
      throw new BadParameterError(name, 'must be a whole number written in decimal digits');
  }
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new BadParameterError(String(issue?.path[0] ?? 'query'), issue?.message ?? 'invalid');
}

/** The 401 of each unusable `Authorization` header: message, and whether a bearer token was sent (RFC 6750 `invalid_token`). */
const REJECTIONS: Readonly<Record<AuthorizationHeader['kind'], { message: string; tokenSent: boolean }>> = {
  none: { message: 'missing Authorization header: send "Authorization: Bearer <API key>"', tokenSent: false },
  other: { message: 'the Authorization header must be "Bearer <API key>"', tokenSent: false },
  malformed: { message: 'the API key is not valid (Footfall keys are ff_ followed by 43 characters)', tokenSent: true },
  key: { message: 'the API key is not valid (unknown or revoked)', tokenSent: true },
};

/** A session cookie that no longer works: signed out, expired, or its user removed. */
const SESSION_ENDED = 'the session has ended: sign in again, or send "Authorization: Bearer <API key>"';

const rejection = (kind: AuthorizationHeader['kind']) =>
  new UnauthorizedError(REJECTIONS[kind].message, REJECTIONS[kind].tokenSent);

/**
 * The account of the request's bearer key (`docs/security.md` "API keys"). Every failure is a 401
 * with `WWW-Authenticate: Bearer realm="footfall"` (RFC 6750 §3), plus
 * `error="invalid_token"` when a bearer token was sent, malformed or not.
 * @throws UnauthorizedError (401)
 */
export async function authenticate(
  keys: ReportHandlerDeps['keys'],
  authorization: string | undefined,
  now: number,
): Promise<string> {
  const parsed = parseAuthorization(authorization);
  if (parsed.kind !== 'key') throw rejection(parsed.kind);
  const account = await keys.authenticate(parsed.key, new Date(now));
  if (!account) throw rejection('key');
  return account;
}

/**
 * The account a report request reads: its bearer key's when an
 * `Authorization` header is sent (`docs/security.md` "API keys"), else its app session's when the
 * `ff_session` cookie is (the app reads through this same API, docs/app.md).
 * @throws UnauthorizedError (401)
 */
async function accountOf(deps: ReportHandlerDeps, event: HttpEvent): Promise<string> {
  const token =
    deps.sessions && !event.headers?.authorization?.trim()
      ? sessionTokenOf(event.cookies, event.headers?.cookie)
      : null;
  if (!token || !deps.sessions) return authenticate(deps.keys, event.headers?.authorization, deps.clock());
  const account = await deps.sessions.accountOf(token);
  if (!account) throw new UnauthorizedError(SESSION_ENDED);
  return account;
}

/**
 * The scope of a shared view's request (header `x-footfall-share`), or null
 * for a request without it. The header wins over a session cookie, so a
 * signed-in user's shared view shows what the link shows and no more.
 * @throws UnauthorizedError (401) unknown, revoked or locked link
 */
async function shareScope(
  deps: ReportHandlerDeps,
  event: HttpEvent,
): Promise<{ account: string; site: string } | null> {
  const token = event.headers?.[SHARE_HEADER];
  if (token === undefined) return null;
  if (!deps.shares) throw new UnauthorizedError('shared links are not read here');
  return shareAccess(deps.shares, token.trim(), (id) =>
    cookieValue(shareCookieName(id), event.cookies, event.headers?.cookie),
  );
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new BadParameterError('path', 'is not valid percent-encoding');
  }
};

type CsvExport = NonNullable<ReportSpec['csv']>;

interface Route {
  pattern: RegExp;
  /** The names of the path's parameters, in order (`domain` among them). */
  names: string[];
  report: ReportSpec;
}

/** The report routes under `/api/v1` (`docs/api.md` "Reports"), matched on the raw path: each report's path with `{name}` as one segment. */
const ROUTES: Route[] = REPORT_LIST.map((report) => ({
  pattern: new RegExp(`^${report.path.replace(/\{[^}]+\}/g, '([^/]+)')}/?$`),
  names: [...report.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''),
  report,
}));

/** Whether a matched path's `{domain}` is `site` (domains compare lowercase, as `siteOf` reads them). */
const sameSite = (route: Route, values: string[], site: string) =>
  values[route.names.indexOf('domain')]?.toLowerCase() === site;

/**
 * Runs a report for a matched path: its query parsed by its schema, then
 * each path parameter by its own (400 naming the one that fails).
 * @throws BadParameterError (400)
 */
function run(
  route: Route,
  deps: ReportDeps,
  account: string,
  values: string[],
  query: Record<string, string | undefined>,
): Promise<object> {
  const { report } = route;
  const args = dict<unknown>();
  if (report.query) Object.assign(args, parseQuery(report.query, query));
  let domain = '';
  route.names.forEach((name, i) => {
    const value = values[i] ?? '';
    if (name === 'domain') domain = value;
    else args[name] = parsePathParam(name, report.params[name]?.schema, value);
  });
  return report.run(deps, account, args as never, () => Promise.resolve(domain));
}

function parsePathParam(name: string, schema: z.ZodType | undefined, value: string): unknown {
  const parsed = (schema ?? z.string()).safeParse(value);
  if (parsed.success) return parsed.data;
  const options =
    schema instanceof z.ZodEnum
      ? `must be one of ${schema.options.join(', ')}`
      : (parsed.error.issues[0]?.message ?? 'is not valid');
  throw new BadParameterError(name, options);
}

/**
 * The report API (`GET /api/v1/*`, `docs/api.md` "Reports", "Errors"; `docs/security.md` "API keys") for an API Gateway
 * proxy route: bearer key first (401), then the route (404 for none), its
 * parameters (400) and the report (404 for another account's site, 503 when
 * the data cannot be read). `GET /api/v1/openapi.json` needs no key.
 */
export function createReportHandler(deps: ReportHandlerDeps): HttpHandler {
  const { logger } = deps;
  return httpHandler(
    async (event: HttpEvent) => {
      const path = event.rawPath;
      if (event.requestContext.http.method !== 'GET') throw new NotFoundError('not found');
      if (/^\/api\/v1\/openapi\.json$/.test(path)) return json(200, openApiDocument());
      const share = await shareScope(deps, event);
      const account = share?.account ?? (await accountOf(deps, event));
      const query = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
      for (const route of ROUTES) {
        const match = route.pattern.exec(path);
        if (!match) continue;
        const values = match.slice(1).map(decode);
        // A shared link reads its own site's dashboard reports (`ReportSpec.shared`); anything else is as unknown as no site.
        if (share && !(route.report.shared && sameSite(route, values, share.site)))
          throw new NotFoundError('not found');
        const csv = wantsCsv(route, query, event.headers?.accept);
        const body = await run(route, { ...deps, store: deps.store() }, account, values, query);
        return csv
          ? csvResponse(csv, body as Parameters<CsvExport['filename']>[0] & { rows: unknown[] })
          : json(200, body);
      }
      throw new NotFoundError('not found');
    },
    { logger, errors: { format: 'json', unexpectedStatus: 503 } },
  );
}

/**
 * The CSV export of a request, or null for JSON: `format=csv`, or no
 * `format` and an `Accept` header naming `text/csv` (`docs/api.md`, "CSV
 * export"). Errors stay JSON whatever was asked.
 * @throws BadParameterError (400) for `format=csv` on a report without CSV, or an unknown format
 */
function wantsCsv(
  route: Route,
  query: Record<string, string | undefined>,
  accept: string | undefined,
): CsvExport | null {
  const format = parseQuery(z.object({ format: formatParam }), { format: query.format }).format;
  if (format === 'json') return null;
  if (format === 'csv' && !route.report.csv)
    throw new BadParameterError('format', 'csv is available for breakdowns, properties, payments and goals');
  const asked = format === 'csv' || (format === undefined && /(^|,)\s*text\/csv\b/i.test(accept ?? ''));
  return asked && route.report.csv ? route.report.csv : null;
}

function csvResponse(csv: CsvExport, body: Parameters<CsvExport['filename']>[0] & { rows: unknown[] }) {
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/csv; charset=utf-8; header=present',
      'content-disposition': `attachment; filename="${csv.filename(body)}"`,
      'cache-control': 'no-store',
    },
    body: toCsv(csv.rows, body.rows),
  };
}

function json(status: number, body: unknown) {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify(body),
  };
}
