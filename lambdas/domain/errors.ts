/**
 * Typed errors of the domain. Each carries the HTTP status it maps to; the one
 * place that turns them into responses is `lambdas/handlers/http.ts`.
 */
export abstract class FootfallError extends Error {
  abstract readonly status: number;
  /** Message safe to show to the caller (spec §7: `{ "error": message }`). */
  get publicMessage(): string {
    return this.message;
  }
}

/** Spec §7 event endpoint: the body is not a JSON event or an array of events (400 `invalid event`). */
export class InvalidEventError extends FootfallError {
  readonly status = 400;
  constructor(readonly detail: string) {
    super('invalid event');
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

/** Missing, malformed, unknown or revoked API key (401). */
export class UnauthorizedError extends FootfallError {
  readonly status = 401;
  constructor(message = 'missing or invalid API key') {
    super(message);
  }
}

/** The site does not exist or belongs to another account, or the visitor is unknown (404). */
export class NotFoundError extends FootfallError {
  readonly status = 404;
}

/** A storage or stream call failed; the caller should retry (503). */
export class UnavailableError extends FootfallError {
  readonly status = 503;
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}
