import { PK, SK } from '../table.js';
import { PARTITIONS } from '../items.js';
import { PAYMENTS_MARK_SK, visitorPk } from '../visit-store.js';
import type { Payment } from '../../../domain/payments/payment.js';
import type { Customer } from '../../../domain/payments/customer.js';
import type { Provider } from '../../../domain/payments/facts.js';
import { paymentKey } from '../../../domain/payments/contribution.js';
import type { PaymentRef } from '../../../ports.js';

/**
 * Keys and codec of a payment's own items (`docs/data-model.md`, "Payments"): PAYMENT, PAYMENT_ALIAS,
 * CUSTOMER, PAYMENT_PENDING, and the payment's copy on its visitor's timeline (VISITOR_PAYMENT, next to
 * the visits, with the visitor's VISITOR_PAYMENTS marker). Keys come from the registry (`items.ts`);
 * a stored item is the domain object with its keys and `type` beside it.
 */
const { VISITOR_PAYMENT } = PARTITIONS.visitor.items;

/** The PAYMENT item's key of a payment in the data namespace `site`. */
export const paymentItemKey = (site: string, provider: Provider, id: string) => ({
  [PK]: PARTITIONS.payment.key(site),
  [SK]: PARTITIONS.payment.items.PAYMENT.key(provider, id),
});

/** The PAYMENT_ALIAS item's key of `alias`, any id of a purchase. */
export const aliasKey = (site: string, provider: Provider, alias: string) => ({
  [PK]: PARTITIONS.paymentAlias.key(site, provider),
  [SK]: PARTITIONS.paymentAlias.items.PAYMENT_ALIAS.key(alias),
});

/** The CUSTOMER item's key. */
export const customerItemKey = (site: string, provider: Provider, id: string) => ({
  [PK]: PARTITIONS.customer.key(site),
  [SK]: PARTITIONS.customer.items.CUSTOMER.key(provider, id),
});

/** A payment's copy in its visitor's partition, next to the visits (timeline reads one partition). */
export const visitorPaymentKey = (
  p: Pick<Payment, 'site' | 'visitor' | 'ts' | 'provider' | 'provider_payment_id'>,
) => ({
  [PK]: visitorPk(p.site, p.visitor ?? ''),
  [SK]: VISITOR_PAYMENT.key(p.ts ?? 0, p.provider, p.provider_payment_id),
});

/** The PAYMENT_PENDING item's key of the payment `key` (`paymentKey`). */
export const pendingKey = (site: string, key: string) => ({
  [PK]: PARTITIONS.paymentPending.key(site),
  [SK]: PARTITIONS.paymentPending.items.PAYMENT_PENDING.key(key),
});

/** The visitor's payments marker key (VISITOR_PAYMENTS, after every visit of the partition). */
export const markerKey = (site: string, visitor: string) => ({
  [PK]: visitorPk(site, visitor),
  [SK]: PAYMENTS_MARK_SK,
});

/** The query of a visitor's timeline copies: the VISITOR_PAYMENT sort key prefix. */
export const visitorPaymentsPrefix = VISITOR_PAYMENT.range.all;

/** The stored item of a payment, in the data namespace `ns` (by default its own `site`). */
export const paymentItem = (p: Payment, ns = p.site) => ({
  ...paymentItemKey(ns, p.provider, p.provider_payment_id),
  type: 'PAYMENT',
  ...p,
});

/** The PAYMENT_ALIAS item pointing `alias` at the canonical `paymentId`. */
export const aliasItem = (site: string, provider: Provider, alias: string, paymentId: string) => ({
  ...aliasKey(site, provider, alias),
  type: 'PAYMENT_ALIAS',
  payment_id: paymentId,
});

/** The stored item of a customer. */
export const customerItem = (c: Customer) => ({
  ...customerItemKey(c.site, c.provider, c.customer_id),
  type: 'CUSTOMER',
  ...c,
});

/** A payment's timeline copy: its key and payment key are all it holds. */
export const visitorPaymentItem = (p: Payment) => ({
  ...visitorPaymentKey(p),
  type: 'VISITOR_PAYMENT',
  payment_key: paymentKey(p),
});

/** The visitor's payments marker set to `latest` (ms). */
export const markerItem = (site: string, visitor: string, latest: number) => ({
  ...markerKey(site, visitor),
  type: 'VISITOR_PAYMENTS',
  latest,
});

/** A PAYMENT_PENDING item: the payment is credited again until `until` (ms). */
export const pendingItem = (site: string, payment: Payment, until: number) => ({
  ...pendingKey(site, paymentKey(payment)),
  type: 'PAYMENT_PENDING',
  provider: payment.provider,
  id: payment.provider_payment_id,
  until,
});

/** A stored item's own attributes: without its keys and `type`. */
function attributesOf(item: Record<string, unknown>): Record<string, unknown> {
  const { [PK]: _pk, [SK]: _sk, type: _type, ...rest } = item;
  return rest;
}

/** The payment a PAYMENT item holds. */
export const paymentOf = (item: Record<string, unknown>) => attributesOf(item) as unknown as Payment;

/** The customer a CUSTOMER item holds. */
export const customerOf = (item: Record<string, unknown>) => attributesOf(item) as unknown as Customer;

/** The payment a VISITOR_PAYMENT sort key names (`P#<13-digit ts>#<provider>#<id>`; the id may contain '#'). */
export function timelineRefOf(sk: string): PaymentRef {
  const [, , provider, ...id] = sk.split('#');
  return { provider: provider as Provider, id: id.join('#') };
}

/** The payment a VISITOR_PAYMENT item's `payment_key` (`provider:id`) names. */
export function paymentRefOf(key: string): PaymentRef {
  const [provider, ...id] = key.split(':');
  return { provider: provider as Provider, id: id.join(':') };
}

/** A PAYMENT_PENDING item's payment and the time (ms) it is retried until. */
export const pendingOf = (item: Record<string, unknown>): PaymentRef & { until: number } => ({
  provider: item.provider as Provider,
  id: String(item.id),
  until: Number(item.until),
});

/** The alias a PAYMENT_ALIAS item is keyed by, as `aliasRef` names it: its provider (last key segment) and id. */
export const aliasOf = (item: Record<string, unknown>): PaymentRef => ({
  provider: String(item[PK]).split('#').at(-1) as Provider,
  id: String(item[SK]),
});
