import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ForbiddenError, NotFoundError } from '../domain/errors.js';
import { mcpOriginProblem } from '../domain/auth/origin.js';
import { authenticate, type ReportHandlerDeps } from './report.js';
import { httpHandler, type HttpEvent, type HttpHandler, type HttpResult } from './http.js';
import { createMcpServer } from './mcp-tools.js';
import { dict } from '../domain/dict.js';

/** The one path the MCP function answers (`docs/mcp.md`: `{base_url}/mcp`). */
export const MCP_PATH = '/mcp';

/** Hop-by-hop and length headers that describe the original HTTP message, not the rebuilt one. */
const DROPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);

/**
 * The web `Request` of a Lambda function URL event (payload format 2.0, the
 * shape of an API Gateway HTTP API event): method, URL, headers and body,
 * decoding the base64 body the URL gives for non-text content types.
 * Headers whose values a `Headers` object refuses are left out.
 */
export function toWebRequest(event: HttpEvent): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value === undefined || DROPPED_HEADERS.has(name.toLowerCase())) continue;
    try {
      headers.set(name, value);
    } catch {
      // not a valid header value; a proxy would have refused it
    }
  }
  if (event.cookies?.length) headers.set('cookie', event.cookies.join('; '));
  const target = `${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  // A Host header no request URL can be built on (`a b`, `[::1`, `x:99999`, `user@x`) would
  // make `new Request` throw (a 503); the transport does not use the host, so fall back.
  const usable = (host: string | null | undefined): host is string => {
    if (!host) return false;
    try {
      const url = new URL(`https://${host}${target}`);
      return url.username === '' && url.password === '';
    } catch {
      return false;
    }
  };
  const host = [headers.get('host'), event.requestContext.domainName].find(usable) ?? 'localhost';
  const url = `https://${host}${target}`;
  const method = event.requestContext.http.method;
  const hasBody = event.body !== undefined && method !== 'GET' && method !== 'HEAD';
  const body = !hasBody
    ? undefined
    : event.isBase64Encoded
      ? new Uint8Array(Buffer.from(event.body ?? '', 'base64'))
      : event.body;
  return new Request(url, { method, headers, body });
}

/** The Lambda result of a web `Response`: status, headers and the body as text (the transport answers JSON or nothing). */
export async function toHttpResult(response: Response): Promise<HttpResult> {
  const headers = dict<string>();
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers['cache-control'] = 'no-store';
  const body = await response.text();
  return { statusCode: response.status, headers, ...(body ? { body } : {}) };
}

function methodNotAllowed(): HttpResult {
  return {
    statusCode: 405,
    headers: { allow: 'POST', 'content-type': 'application/json' },
    body: JSON.stringify({
      error: 'method not allowed: this MCP endpoint is stateless and takes POST only (no event stream, no session)',
    }),
  };
}

export interface McpHandlerDeps extends ReportHandlerDeps {
  /**
   * Web origins (`webOrigin` form) whose pages may call the endpoint: the app's origin (its
   * CloudFront domain, `APP_ORIGINS` in AWS; the local server's own) and any the owner lists
   * (`docs/mcp.md`, "Origin"). Read per request: the local server knows its port only once listening.
   */
  allowedOrigins(): readonly string[];
}

/**
 * The MCP endpoint (`/mcp`, `docs/mcp.md`; `docs/security.md` "API keys"; `docs/api.md` "Errors") behind a Lambda function URL:
 *
 * 0. A request whose `Origin` is present and not an allowed one is 403
 *    `{"error": …}`, before anything else (`mcpOriginProblem`: the MCP
 *    specification's defence against DNS rebinding); no `Origin` passes.
 * 1. Any path but `/mcp` is 404; any method but `POST` is 405 with
 *    `Allow: POST`. In stateless mode the SDK would answer `GET` with an
 *    event stream that never ends and hang a buffered Lambda (`docs/mcp.md`
 *    "How it runs"); `DELETE` ends a session, and there are none.
 * 2. The bearer key, before any MCP processing: 401 `{"error": …}` without a
 *    valid one, exactly as the report API.
 * 3. A new `McpServer` and a new stateless `WebStandardStreamableHTTPServerTransport`
 *    with JSON responses for this one request; its tools call the report use
 *    cases with the key's account and a report store of their own.
 *
 * Tool errors are tool results with `isError: true` (`mcp-tools.ts`); a key
 * lookup that fails is 503 like the report API.
 */
export function createMcpHandler(deps: McpHandlerDeps): HttpHandler {
  const { logger } = deps;
  return httpHandler(
    async (event: HttpEvent) => {
      const problem = mcpOriginProblem(event.headers?.origin, deps.allowedOrigins());
      if (problem) throw new ForbiddenError(`Refused: ${problem}.`);
      if (event.rawPath !== MCP_PATH && event.rawPath !== `${MCP_PATH}/`) throw new NotFoundError('not found');
      if (event.requestContext.http.method !== 'POST') return methodNotAllowed();
      const account = await authenticate(deps.keys, event.headers?.authorization, deps.clock());
      const server = createMcpServer({ ...deps, store: deps.store() }, account, logger);
      server.server.onerror = (error) => logger.debug('mcp request rejected', { message: error.message });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      try {
        await server.connect(transport);
        const result = await toHttpResult(await transport.handleRequest(toWebRequest(event)));
        return result;
      } finally {
        await server.close();
      }
    },
    { logger, errors: { format: 'json', unexpectedStatus: 503 } },
  );
}
