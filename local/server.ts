import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../lambdas/handlers/http.js';
import { localContext, sendResult, toApiGatewayEvent } from './api-gateway.js';

/** API Gateway's payload limit is 10 MB; locally we stop reading at 1 MiB and answer 413 as a proxy would. */
const MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * How long an idle keep-alive connection stays open (ms). Node's default (5 s)
 * races clients that reuse a connection after a pause: the server closes the
 * socket just as the client sends on it (`UND_ERR_SOCKET`, `docs/reliability.md` "The checks", keep-alive). Proxies
 * keep idle connections longer than their clients do (an ALB's idle timeout is
 * 60 s by default, and AWS asks the server behind it to keep its own longer:
 * ELB user guide, "Connection idle timeout"), so we do as a server behind one
 * must: 65 s, above the 60 s. undici (Node's fetch) reads the `Keep-Alive:
 * timeout=65` hint and drops its side a second earlier, so the client always
 * closes first.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Above the keep-alive timeout, so a connection idle that long is closed as idle, not as a slow request (Node http docs, `server.headersTimeout`). */
export const HEADERS_TIMEOUT_MS = 66_000;

export type RouteHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/** One route as in the HTTP API: methods, a path pattern with `{name}` and `{proxy+}` parameters, the handler. */
export interface Route {
  methods: readonly string[];
  path: string;
  handler: RouteHandler;
  functionName: string;
  /** The route answers cross-origin callers (`/api/event`): the server's own answers (413) carry `Access-Control-Allow-Origin: *` too. */
  cors?: boolean;
}

/** Every method an HTTP API `ANY` route takes. */
export const ANY_METHOD: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Where the server logs: a request that failed at error level, a client that went away at debug level. */
export interface ServerLog {
  debug(message: string, extra: Record<string, unknown>): void;
  error(message: string, error: Error): void;
}

const consoleLog: ServerLog = { debug: () => undefined, error: (message, error) => console.error(message, error) };

/** The client closed the connection before its body was read: normal traffic (a tab closed, a beacon cut), not a server fault. */
class ClientAbortedError extends Error {}

function compile(path: string): RegExp {
  const pattern = path
    .split('/')
    .map((part) => {
      if (part === '{proxy+}') return '(?<proxy>.+)';
      const param = /^\{(\w+)\}$/.exec(part);
      return param ? `(?<${param[1]}>[^/]+)` : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${pattern}$`);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        ended = true;
        resolve(null);
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    // An abort mid-body is an 'error' (ECONNRESET, "aborted") and/or a 'close' before 'end'.
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ECONNRESET' || req.destroyed ? new ClientAbortedError(error.message) : error),
    );
    req.on('close', () => {
      if (!ended) reject(new ClientAbortedError('aborted'));
    });
  });
}

/**
 * The local stand-in for API Gateway: routes requests to the same Lambda
 * handlers as AWS, with the same event shape. Unknown paths get a JSON 404,
 * a known path with another method 405; `fallback` (the app's static files)
 * gets the requests no route matches first.
 */
export function createLocalServer(
  routes: readonly Route[],
  options: { fallback?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>; log?: ServerLog } = {},
): Server {
  const log = options.log ?? consoleLog;
  const compiled = routes.map((route) => ({ ...route, regex: compile(route.path) }));
  return createServer(
    { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS },
    async (req, res) => {
      try {
        const path = new URL(req.url ?? '/', 'http://localhost').pathname;
        const matches = compiled.map((r) => ({ route: r, match: r.regex.exec(path) })).filter((m) => m.match);
        const hit = matches.find((m) => m.route.methods.includes(req.method ?? 'GET'));
        if (!hit) {
          // The app's static files (app mode), as CloudFront serves them in AWS.
          if (matches.length === 0 && options.fallback && (await options.fallback(req, res))) return;
          req.resume();
          const status = matches.length > 0 ? 405 : 404;
          sendResult(res, {
            statusCode: status,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: status === 404 ? 'not found' : 'method not allowed' }),
          });
          return;
        }
        const body = await readBody(req);
        if (body === null) {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (hit.route.cors) headers['access-control-allow-origin'] = '*';
          sendResult(res, { statusCode: 413, headers, body: JSON.stringify({ error: 'request too large' }) });
          return;
        }
        const params = Object.fromEntries(Object.entries(hit.match?.groups ?? {}).map(([k, v]) => [k, safeDecode(v)]));
        const routeKey = `${req.method} ${hit.route.path}`;
        const event = toApiGatewayEvent(req, body, routeKey, Object.keys(params).length ? params : undefined);
        sendResult(res, await hit.route.handler(event, localContext(hit.route.functionName)));
      } catch (error) {
        if (error instanceof ClientAbortedError) {
          log.debug('client aborted the request', { method: req.method, path: req.url?.split('?')[0] });
          return;
        }
        log.error('local server error', error as Error);
        if (!res.headersSent) sendResult(res, { statusCode: 500, body: JSON.stringify({ error: 'internal error' }) });
      }
    },
  );
}
