import * as z from 'zod';
import { PAYMENT_STATUSES, PROVIDERS, type ProviderFacts } from './facts.js';
import { normalizeCurrency } from './currency.js';
import { isValidVisitorId } from '../visitor.js';
import { ImportLineError } from '../import-line.js';

/** Subscription statuses that mean the customer is still paying (`docs/payments.md`). */
const PAYING = new Set(['active', 'trialing', 'past_due', 'on_trial', 'paid']);

/**
 * One line of `footfall import payments <file.jsonl>`: a historic payment in
 * our own vocabulary (`docs/api.md` "Payments" field names), optionally with the status of
 * its subscription.
 */
export const paymentLineSchema = z.object({
  provider: z.enum(PROVIDERS),
  provider_payment_id: z.string().min(1).max(255),
  ts: z.iso.datetime({ offset: true }),
  amount: z.number().int().nonnegative(),
  currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code'),
  refunded: z.number().int().nonnegative().default(0),
  status: z.enum(PAYMENT_STATUSES).default('paid'),
  customer_id: z.string().min(1).max(255).nullish(),
  visitor_id: z.string().max(64).nullish(),
  is_renewal: z.boolean().default(false),
  amount_usd: z.number().nonnegative().nullish(),
  subscription_id: z.string().min(1).max(255).nullish(),
  subscription_status: z.string().min(1).max(32).nullish(),
});

/**
 * Parses one line into provider facts, as if a webhook had said it.
 * @throws ImportLineError with the line number for bad JSON or a failing field
 */
export function parsePaymentLine(text: string, lineNumber: number): ProviderFacts {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ImportLineError(lineNumber, 'not JSON');
  }
  const parsed = paymentLineSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ImportLineError(lineNumber, `${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'invalid'}`);
  }
  const line = parsed.data;
  if (line.refunded > line.amount) throw new ImportLineError(lineNumber, 'refunded: more than amount');
  const ts = Date.parse(line.ts);
  const visitor = isValidVisitorId(line.visitor_id) ? line.visitor_id : undefined;
  return {
    event_id: `import:${lineNumber}`,
    event_type: 'import.payment',
    payments: [
      {
        provider: line.provider,
        id: line.provider_payment_id,
        aliases: [],
        ts,
        amount: line.amount,
        currency: normalizeCurrency(line.currency),
        ...(line.amount_usd != null ? { amount_usd: line.amount_usd } : {}),
        refunded: line.refunded,
        status: line.status,
        ...(line.customer_id ? { customer_id: line.customer_id } : {}),
        ...(visitor ? { visitor_id: visitor } : {}),
        is_renewal: line.is_renewal,
        ...(line.subscription_id ? { subscription_id: line.subscription_id } : {}),
      },
    ],
    subscriptions:
      line.subscription_id && line.subscription_status
        ? [
            {
              provider: line.provider,
              subscription_id: line.subscription_id,
              ...(line.customer_id ? { customer_id: line.customer_id } : {}),
              status: line.subscription_status,
              paying: PAYING.has(line.subscription_status),
              ts,
            },
          ]
        : [],
    customers: [],
  };
}
