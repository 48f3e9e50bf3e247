/**
 * What every provider module shares: the module contract, the two typed
 * errors, and small helpers for signatures and payload parsing. Kept apart
 * from `index.ts` so that a provider module never imports the registry that
 * imports it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import { FootfallError } from '../../errors.js';
import { isValidVisitorId } from '../../visitor.js';
import type { Provider, ProviderFacts } from '../facts.js';
import { normalizeCurrency, toMajor } from '../currency.js';
import { own } from '../../dict.js';

/**
 * A webhook whose signature is missing, malformed, wrong or too old (400). The
 * message says which, and is safe to show; `detail` holds the library's own
 * words for logs.
 */
export class WebhookSignatureError extends FootfallError {
  readonly status = 400;
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/**
 * A verified webhook of an event type we use whose payload is not the shape
 * we read (400): not JSON, or a field we need is missing or of the wrong type.
 * The message is generic; `detail` names the field for logs.
 */
export class WebhookPayloadError extends FootfallError {
  readonly status = 400;
  constructor(
    readonly provider: Provider,
    readonly eventType: string,
    readonly detail: string,
  ) {
    super('webhook payload does not match the expected schema');
  }
}

/** One payment provider: signature scheme and event vocabulary. */
export interface ProviderModule {
  provider: Provider;
  /**
   * Verifies the signature over the raw body (exact bytes as received) and
   * returns the parsed event.
   * @param headers request headers, names lowercased
   * @param nowMs the current time, ms since epoch (UTC), for timestamp tolerance
   * @throws WebhookSignatureError
   */
  verify(rawBody: string, headers: Record<string, string | undefined>, secret: string, nowMs: number): unknown;
  /**
   * Facts of a verified event; null for event types we don't use (the
   * endpoint answers 200 and ignores them).
   * @throws WebhookPayloadError for a used event type whose payload doesn't match the schema
   */
  facts(event: unknown): ProviderFacts | null;
}

/** The metadata / custom-data key a site puts the tracker's visitor id under (`docs/tracking.md` "Passing the visitor id to checkout"). */
export const VISITOR_KEY = 'footfall_visitor_id';

type Metadata = Readonly<Record<string, unknown>> | null | undefined;

/**
 * The first valid visitor id (`docs/ingestion.md` "The event's fields": 8–64 of `[A-Za-z0-9-]`) under
 * `footfall_visitor_id` in the given metadata objects, in order. Metadata is
 * written by the site, so an invalid value is ignored rather than rejected.
 */
export function visitorFrom(...metadata: Metadata[]): string | undefined {
  for (const m of metadata) {
    const v = m?.[VISITOR_KEY];
    if (isValidVisitorId(v)) return v;
  }
  return undefined;
}

/**
 * How far a webhook's signed timestamp may be from now, either way, seconds:
 * the 5 minutes Stripe (https://docs.stripe.com/webhooks#verify-events),
 * Paddle (https://developer.paddle.com/webhooks/signature-verification) and
 * Standard Webhooks (Polar) document. Both directions: a timestamp from the
 * future is as replayable as an old one once its time comes.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * Checks a signed timestamp (seconds since the epoch) against `nowMs`: at most
 * `SIGNATURE_TOLERANCE_SECONDS` old or ahead; exactly 300 s either way passes.
 * Call it after the signature matched, so only a genuine delivery is called stale.
 * @throws WebhookSignatureError `webhook timestamp too old` / `too new`
 */
export function checkSignedTime(signedAtSeconds: number, nowMs: number): void {
  // Whole seconds, as Stripe's SDK and Standard Webhooks count: 300 s passes, 301 s does not.
  const age = Math.floor(nowMs / 1000) - signedAtSeconds;
  if (age > SIGNATURE_TOLERANCE_SECONDS) throw new WebhookSignatureError('webhook timestamp too old');
  if (age < -SIGNATURE_TOLERANCE_SECONDS) throw new WebhookSignatureError('webhook timestamp too new');
}

/** HMAC-SHA256 of `message` under the UTF-8 bytes of `key`, lowercase hex. */
export function hmacSha256Hex(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests (case-insensitive); false when lengths differ. */
export function hexDigestsEqual(expected: string, given: string): boolean {
  const a = Buffer.from(expected.toLowerCase(), 'utf8');
  const b = Buffer.from(given.trim().toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** JSON.parse of a body whose signature already checked out; a body that is not JSON is a payload error. */
export function parseJsonBody(provider: Provider, rawBody: string): unknown {
  try {
    return JSON.parse(rawBody) as unknown;
  } catch {
    throw new WebhookPayloadError(provider, 'unknown', 'body is not JSON');
  }
}

/** `schema.parse(value)`, with a failure turned into a WebhookPayloadError naming the first bad field. */
export function parseWith<T extends z.ZodType>(
  schema: T,
  value: unknown,
  provider: Provider,
  eventType: string,
): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new WebhookPayloadError(
    provider,
    eventType,
    `${issue?.path.join('.') || 'event'}: ${issue?.message ?? 'invalid'}`,
  );
}

/**
 * A provider's `facts` step: validates the event envelope with `schema`, then
 * hands it to the handler of its type (`typeOf`), or returns null for a type
 * the provider module does not use (the webhook answers 200 "ignored").
 * @throws WebhookPayloadError when the envelope does not match `schema`
 */
export function factsByType<T extends z.ZodType>(
  schema: T,
  provider: Provider,
  typeOf: (envelope: z.output<T>) => string,
  handlers: Readonly<Record<string, (envelope: z.output<T>) => ProviderFacts>>,
): (event: unknown) => ProviderFacts | null {
  return (event) => {
    const envelope = parseWith(schema, event, provider, 'unknown');
    const type = typeOf(envelope);
    const handler = own(handlers, type);
    if (!handler) return null;
    const facts = handler(envelope);
    // Ids are keys of the payment's items, and DynamoDB rejects an empty key: a payment without an id is a
    // bad payload (400), not a storage failure (503); an empty other id names nothing and is left out.
    if (facts.payments.some((p) => p.id === ''))
      throw new WebhookPayloadError(provider, type, 'the payment id is empty');
    return { ...facts, payments: facts.payments.map((p) => ({ ...p, aliases: p.aliases.filter((a) => a !== '') })) };
  };
}

/** ProviderFacts with nothing in it: a used event type that, this time, states no fact. */
export function noFacts(eventId: string, eventType: string): ProviderFacts {
  return { event_id: eventId, event_type: eventType, payments: [], subscriptions: [], customers: [] };
}

/** An ISO 8601 / RFC 3339 date-time string that `Date.parse` reads (providers send 0 to 9 fraction digits). */
export const isoDateTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not a date-time');

/** ISO 8601 / RFC 3339 date-time → ms since epoch (UTC). */
export function isoToMs(iso: string): number {
  return Date.parse(iso);
}

/**
 * The decimal USD value of an amount when the payment itself is in USD (the
 * only case where no conversion is needed); undefined otherwise.
 */
export function usdIfUsd(amount: number, currency: string): number | undefined {
  return normalizeCurrency(currency) === 'USD' ? toMajor(amount, 'USD') : undefined;
}

/** Copies `value` without the keys whose value is undefined, so facts compare equal to their written-out form. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Distinct non-empty ids, in order, leaving out `except` (the fact's own id). */
export function otherIds(except: string, ...ids: (string | null | undefined)[]): string[] {
  const out: string[] = [];
  for (const id of ids) if (id && id !== except && !out.includes(id)) out.push(id);
  return out;
}
