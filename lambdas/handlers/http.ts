import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { FootfallError, UNAVAILABLE_MESSAGE } from '../domain/errors.js';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * How errors are written: `json` gives the report API's `{ "error": message }`
 * (`docs/api.md` "Errors"); `text` gives the event endpoint's plain bodies (`invalid event`,
 * `try again`). `unexpectedStatus` is what an error that is not a
 * `FootfallError` becomes: the event endpoint answers 503 so that a client
 * retries and nothing is lost; elsewhere 500.
 */
export interface ErrorFormat {
  format: 'json' | 'text';
  unexpectedStatus: number;
}

const TEXT_BODIES: Readonly<Record<number, string>> = {
  400: 'invalid event',
  405: 'method not allowed',
  413: 'request too large',
  503: 'try again',
};

/** The one place that maps typed errors to HTTP responses. */
export function errorResponse(error: unknown, format: ErrorFormat): HttpResult {
  const known = error instanceof FootfallError;
  const status = known ? error.status : format.unexpectedStatus;
  const message = known ? error.publicMessage : status === 503 ? UNAVAILABLE_MESSAGE : 'internal error';
  const extra = known ? error.headers : {};
  if (format.format === 'text') {
    return {
      statusCode: status,
      headers: { 'content-type': 'text/plain; charset=utf-8', ...extra },
      body: TEXT_BODIES[status] ?? message,
    };
  }
  const field = known ? error.field : undefined;
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', ...extra },
    body: JSON.stringify(field ? { error: message, field } : { error: message }),
  };
}

function errorMapper(format: ErrorFormat, logger: Logger): middy.MiddlewareObj<HttpEvent, HttpResult> {
  return {
    onError: async (request) => {
      const error = request.error;
      if (error instanceof FootfallError && error.status < 500) {
        logger.debug('request rejected', {
          status: error.status,
          message: error.message,
          detail: (error as { detail?: string }).detail,
        });
      } else {
        logger.error('request failed', error as Error);
      }
      request.response = errorResponse(error, format);
    },
  };
}

/**
 * Wraps a handler body with the HTTP middlewares every endpoint shares
 * (`docs/architecture.md` "Handlers"): lowercase headers, CORS when asked (`*`, `docs/ingestion.md` "Request"),
 * and typed errors to responses.
 */
export function httpHandler(
  body: (event: HttpEvent, context: Context) => Promise<HttpResult>,
  options: { logger: Logger; errors: ErrorFormat; cors?: { methods: string; headers?: string; maxAge?: number } },
): HttpHandler {
  // No early-timeout timer: Lambda enforces the timeout itself, and a timer per
  // request was a measurable share of the event endpoint's CPU time (`docs/benchmarks.md`).
  const handler = middy<HttpEvent, HttpResult>(body, { timeoutEarlyInMillis: 0 }).use(httpHeaderNormalizer());
  if (options.cors) {
    handler.use(
      httpCors({
        origin: '*',
        methods: options.cors.methods,
        headers: options.cors.headers ?? 'Content-Type',
        maxAge: options.cors.maxAge ?? 86_400,
      }),
    );
  }
  handler.use(errorMapper(options.errors, options.logger));
  return handler as unknown as HttpHandler;
}

/** The request body as UTF-8 text, decoding API Gateway's base64 for binary content types. */
export function bodyText(event: HttpEvent): string | undefined {
  if (event.body === undefined) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}
