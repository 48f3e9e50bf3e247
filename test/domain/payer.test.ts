import { describe, expect, it } from 'vitest';
import {
  entryChange,
  heldInLine,
  memberMove,
  payerCustomerId,
  payerProvider,
  sourcesInLine,
  statusSources,
  statusesOf,
  type PayerFacts,
  type StoredEntry,
} from '../../lambdas/domain/payments/payer.js';
import { emptyCustomer, type Customer } from '../../lambdas/domain/payments/customer.js';
import type { PayerSummary } from '../../lambdas/domain/reports/cohorts.js';

/** The rules that keep a payer's retention items in line (`lambdas/domain/payments/payer.ts`), case by case. */

describe('payer keys (customerKey read back)', () => {
  it.each([
    ['stripe:cus_1', 'stripe', 'cus_1'],
    ['paddle:ctm:with:colons', 'paddle', 'ctm:with:colons'],
    ['payment:stripe:pi_1', 'stripe', null],
    ['payment:lemonsqueezy:ord:9', 'lemonsqueezy', null],
  ])('%s: provider %s, customer %s', (payer, provider, customer) => {
    expect(payerProvider(payer)).toBe(provider);
    expect(payerCustomerId(payer)).toBe(customer);
  });
});

describe('entryChange: which revision of a payment entry counts', () => {
  const stored = (rev: number, pending: boolean, entry: string | null): StoredEntry => ({ rev, pending, entry });
  it.each<[string, StoredEntry | null, number, string | null, ReturnType<typeof entryChange>]>([
    ['never countable, nothing stored', null, 1, null, 'none'],
    ['first countable revision', null, 1, '{"a":1}', 'write'],
    ['a newer revision wrote it', stored(3, false, '{"a":1}'), 2, '{"a":2}', 'none'],
    ['a newer revision dropped it', stored(3, false, null), 2, '{"a":2}', 'none'],
    ['same entry, summary took it in', stored(2, false, '{"a":1}'), 2, '{"a":1}', 'inLine'],
    ['same entry, older revision, taken in', stored(1, false, '{"a":1}'), 2, '{"a":1}', 'inLine'],
    ['same entry still pending', stored(2, true, '{"a":1}'), 2, '{"a":1}', 'write'],
    ['entry changed', stored(1, false, '{"a":1}'), 2, '{"a":2}', 'write'],
    ['stopped being countable', stored(1, false, '{"a":1}'), 2, null, 'write'],
    ['not countable, kept without entry', stored(1, false, null), 2, null, 'inLine'],
    ['countable again', stored(1, false, null), 2, '{"a":1}', 'write'],
  ])('%s', (_, before, rev, wanted, change) => {
    expect(entryChange(before, rev, wanted)).toBe(change);
  });
});

describe('memberMove and heldInLine: the cohort days a payer leaves and touches', () => {
  it.each<[string[], string | null, string[], string[], boolean]>([
    [[], null, [], [], true],
    [[], '2026-05-01', [], ['2026-05-01'], false],
    [['2026-05-01'], '2026-05-01', [], ['2026-05-01'], true],
    [['2026-05-03'], '2026-05-01', ['2026-05-03'], ['2026-05-01', '2026-05-03'], false],
    [['2026-05-03', '2026-05-01'], '2026-05-01', ['2026-05-03'], ['2026-05-01', '2026-05-03'], false],
    [['2026-05-03'], null, ['2026-05-03'], ['2026-05-03'], false],
    [['2026-05-01', '2026-05-01'], '2026-05-01', [], ['2026-05-01'], false],
  ])('held %j, day %s: leaves %j, recomputes %j, in line %s', (held, day, left, days, inLine) => {
    expect(memberMove(held, day)).toEqual({ left, days });
    expect(heldInLine(held, day)).toBe(inLine);
  });
});

describe('status sources', () => {
  const summary = { day: '2026-05-01' } as PayerSummary;
  const facts = (s: PayerSummary | null, statuses: number, customerExists: boolean): PayerFacts => ({
    summary: s,
    statuses: Array.from({ length: statuses }, (_, i) => ({ status: 'active', paying: true, ts: i })),
    customerExists,
  });
  it.each<[string, PayerFacts, Record<string, boolean>, boolean]>([
    ['no summary, no customer: nothing to record', facts(null, 0, false), {}, true],
    ['a payer not yet a source', facts(summary, 0, false), {}, false],
    ['a customer without payment not yet a source', facts(null, 0, true), {}, false],
    ['a known source, no status', facts(summary, 0, true), { stripe: false }, true],
    ['statuses, source without them', facts(summary, 1, true), { stripe: false }, false],
    ['statuses, source with them', facts(null, 2, true), { stripe: true }, true],
    ['another provider is a source', facts(summary, 0, false), { paddle: true }, false],
  ])('%s', (_, payer, sources, inLine) => {
    expect(sourcesInLine('stripe', payer, sources)).toBe(inLine);
  });

  const customer = (provider: Customer['provider'], id: string, subscriptions: number): Customer => ({
    ...emptyCustomer('s', provider, id),
    subscriptions: Object.fromEntries(
      Array.from({ length: subscriptions }, (_, i) => [`sub_${i}`, { status: 'active', paying: true, ts: i }]),
    ),
  });
  it('a provider is a source of statuses when any of its customers sent one', () => {
    const sources = statusSources([
      customer('stripe', 'a', 0),
      customer('stripe', 'b', 1),
      customer('stripe', 'c', 0),
      customer('paddle', 'd', 0),
    ]);
    expect([...sources].sort()).toEqual([
      ['paddle', false],
      ['stripe', true],
    ]);
  });
  it('statusesOf: a customer subscriptions, none without one', () => {
    expect(statusesOf(customer('stripe', 'a', 2)).map((s) => s.ts)).toEqual([0, 1]);
    expect(statusesOf(undefined)).toEqual([]);
  });
});
