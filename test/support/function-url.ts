import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** What a test sets of a request to a Lambda function URL. */
export interface FunctionUrlRequest {
  method: string;
  /** The path after the URL's host, e.g. `/api/event`. */
  path: string;
  /** Header names lower-case, as Lambda delivers them; `cookie` is moved to `cookies`. */
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  sourceIp?: string;
  query?: string;
}

/**
 * The event Lambda hands a function behind a function URL (auth NONE), in the
 * shape of AWS's example request payload: payload format version 2.0 with
 * `routeKey`/`stage` set to the `$default` placeholders, `requestContext.http`
 * with the connection's `sourceIp`, the Cookie header as a `cookies` array,
 * `authorizer` null without IAM auth, `pathParameters` and `stageVariables`
 * null. Source: AWS Lambda developer guide, "Invoking Lambda function URLs",
 * "Request payload format"
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-request-payload).
 */
export function functionUrlEvent(request: FunctionUrlRequest): APIGatewayProxyEventV2 {
  const { cookie, ...headers } = request.headers ?? {};
  const urlId = 'k3x7q2mzt5vbnw8yhc4rjd6gfp0sael1';
  const domainName = `${urlId}.lambda-url.eu-central-1.on.aws`;
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath: request.path,
    rawQueryString: request.query ?? '',
    ...(cookie ? { cookies: cookie.split(';').map((c) => c.trim()) } : {}),
    headers: {
      host: domainName,
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '443',
      'x-forwarded-for': request.sourceIp ?? '198.51.100.7',
      ...headers,
    },
    ...(request.query ? { queryStringParameters: Object.fromEntries(new URLSearchParams(request.query)) } : {}),
    requestContext: {
      accountId: 'anonymous',
      apiId: urlId,
      authentication: null,
      authorizer: null,
      domainName,
      domainPrefix: urlId,
      http: {
        method: request.method,
        path: request.path,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '198.51.100.7',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: 'e1506fd5-9e7b-434f-bd42-4f8fa224b599',
      routeKey: '$default',
      stage: '$default',
      time: '23/Nov/2026:22:50:22 +0000',
      timeEpoch: 1795474222677,
    },
    ...(request.body === undefined ? {} : { body: request.body }),
    pathParameters: null,
    isBase64Encoded: request.isBase64Encoded ?? false,
    stageVariables: null,
  };
  // The SDK's type has no nulls where Lambda sends them; the handlers must cope with what Lambda sends.
  return event as unknown as APIGatewayProxyEventV2;
}
