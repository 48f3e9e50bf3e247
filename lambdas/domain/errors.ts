/**
 * Typed errors of the domain. Each carries the HTTP status it maps to; the one
 * place that turns them into responses is `lambdas/handlers/http.ts`.
 */
export abstract class FootfallError extends Error {
  abstract readonly status: number;
  /** Message safe to show to the caller (`docs/api.md` "Errors": `{ "error": message }`). */
  get publicMessage(): string {
    return this.message;
  }
  /** Response headers the status calls for (e.g. `WWW-Authenticate` on a 401); none by default. */
  get headers(): Readonly<Record<string, string>> {
    return {};
  }
  /** The input field the error is about, sent as `field` beside `error` so a form shows it next to that field (docs/app.md). */
  get field(): string | undefined {
    return undefined;
  }
}

/** `docs/api.md` "Errors" event endpoint: the body is not a JSON event or an array of events (400 `invalid event`). */
export class InvalidEventError extends FootfallError {
  readonly status = 400;
  constructor(readonly detail: string) {
    super('invalid event');
  }
}

/** The request body is over the endpoint's ceiling (413); `limit` in bytes. */
export class PayloadTooLargeError extends FootfallError {
  readonly status = 413;
  constructor(readonly limit: number) {
    super('request too large');
  }
  get detail(): string {
    return `body over ${this.limit} bytes`;
  }
}

/** A query or path parameter is not valid (400), e.g. an unknown range, dimension or filter. */
export class BadParameterError extends FootfallError {
  readonly status = 400;
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(`${parameter}: ${message}`);
  }
}

/** Realm of our bearer challenges (RFC 6750 §3). */
export const AUTH_REALM = 'footfall';

/**
 * Missing, malformed, unknown or revoked API key (401). Every 401 carries the
 * RFC 6750 §3 challenge `WWW-Authenticate: Bearer realm="footfall"`, so a
 * client (MCP Inspector among them) reports the bad key instead of starting an
 * OAuth sign-in; `error="invalid_token"` is added when a bearer key was sent
 * (§3.1), and left out when no credentials or another scheme were sent (§3:
 * "SHOULD NOT include an error code").
 */
export class UnauthorizedError extends FootfallError {
  readonly status = 401;
  constructor(
    message = 'missing or invalid API key',
    readonly tokenSent = false,
  ) {
    super(message);
  }

  override get headers(): Readonly<Record<string, string>> {
    const params = [`realm="${AUTH_REALM}"`];
    // error_description must be %x20-21 / %x23-5B / %x5D-7E (RFC 6750 §3): no quotes or backslashes.
    if (this.tokenSent)
      params.push(
        'error="invalid_token"',
        `error_description="${this.message.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '')}"`,
      );
    return { 'www-authenticate': `Bearer ${params.join(', ')}` };
  }
}

/** The site does not exist or belongs to another account, or the visitor is unknown (404). */
export class NotFoundError extends FootfallError {
  readonly status = 404;
}

/** What a 503 says when the cause is ours to know, not the caller's: the store or a function behind it failed. */
export const UNAVAILABLE_MESSAGE = 'data could not be read or written, retry later';

/** A storage or stream call failed; the caller should retry (503). */
export class UnavailableError extends FootfallError {
  readonly status = 503;
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** A form field of an app request is not valid (400 `{error, field}`): the message is written for the person filling the form. */
export class FieldError extends FootfallError {
  readonly status = 400;
  constructor(
    private readonly fieldName: string,
    message: string,
  ) {
    super(message);
  }

  override get field(): string {
    return this.fieldName;
  }
}

/** The thing to add exists already, e.g. a site or a user (409). */
export class ConflictError extends FootfallError {
  readonly status = 409;
  constructor(
    message: string,
    private readonly fieldName?: string,
  ) {
    super(message);
  }

  override get field(): string | undefined {
    return this.fieldName;
  }
}

/** A signed-in request that may not do this: a cross-site write (CSRF check) or removing oneself (403). */
export class ForbiddenError extends FootfallError {
  readonly status = 403;
}

/** Too many sign-in attempts (429, with `Retry-After` in seconds, RFC 6585 §4). */
export class TooManyRequestsError extends FootfallError {
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
  }

  override get headers(): Readonly<Record<string, string>> {
    return { 'retry-after': String(this.retryAfterS) };
  }
}

/** A known path with another method (405). */
export class MethodNotAllowedError extends FootfallError {
  readonly status = 405;
}

/** Thrown when adding an account or site that already exists. */
export class AlreadyExistsError extends Error {}
