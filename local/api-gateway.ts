import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../lambdas/handlers/http.js';
import { dict } from '../lambdas/domain/dict.js';

/** Content types API Gateway passes as text; others arrive base64-encoded (isBase64Encoded). */
const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|javascript|xml)|$)/i;

/** What an HTTP API event is made of; the rest is filled in as API Gateway would. */
export interface HttpEventInit {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  sourceIp?: string;
  routeKey?: string;
  pathParameters?: Record<string, string>;
}

/**
 * An API Gateway HTTP API (payload format 2.0) event, the shape a Lambda
 * handler gets in AWS: for the local server, and for tests and benchmarks
 * that call handlers directly.
 */
export function httpApiEvent(init: HttpEventInit): HttpEvent {
  // Payload 2.0 moves the Cookie header into `cookies`, one entry per cookie.
  const { cookie, ...headers } = init.headers ?? {};
  const cookies = cookie
    ?.split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  const query = dict<string>();
  for (const [k, v] of new URLSearchParams(init.query ?? '')) query[k] = k in query ? `${query[k]},${v}` : v;
  const routeKey = init.routeKey ?? `${init.method} ${init.path}`;
  const now = Date.now();
  return {
    version: '2.0',
    routeKey,
    rawPath: init.path,
    rawQueryString: init.query ?? '',
    ...(cookies?.length ? { cookies } : {}),
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: init.pathParameters,
    isBase64Encoded: init.isBase64Encoded ?? false,
    body: init.body,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
      http: {
        method: init.method,
        path: init.path,
        protocol: 'HTTP/1.1',
        sourceIp: init.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
    },
  };
}

/**
 * Turns a Node request into the API Gateway HTTP API (payload format 2.0)
 * event a Lambda handler gets in AWS, so local mode runs the same handlers.
 */
export function toApiGatewayEvent(
  req: IncomingMessage,
  body: Buffer,
  routeKey: string,
  pathParameters?: Record<string, string>,
): HttpEvent {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers = dict<string>();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  return httpApiEvent({
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.search.slice(1),
    headers,
    body: body.length === 0 ? undefined : isText ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !isText,
    sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
    routeKey,
    pathParameters,
  });
}

/** A Lambda context for handlers run in-process (their only consumers are the logger and timeouts). */
export function localContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/local/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Writes a handler's result as API Gateway would. */
export function sendResult(res: ServerResponse, result: HttpResult): void {
  const body =
    result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const headers = dict<string | number | string[]>();
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  headers['content-length'] = body.length;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(body);
}
