import { describe, expect, it } from 'vitest';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { importPayments, type PaymentImportProgress } from '../../lambdas/services/payment-import.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import type { ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import { memoryTable } from '../support/dynamo.js';

/**
 * The import reports each phase as it begins, the payment-counting ones with their counts and the
 * recomputing ones with no fraction: the progress a user sees, and the points
 * `test/reliability/import-payments-crash.test.ts` kills the import at.
 */
const TS = Date.UTC(2026, 4, 1);

const payment = (i: number): ProviderFacts => ({
  event_id: `evt_${i}`,
  event_type: 'test',
  payments: [
    {
      provider: 'stripe',
      id: `pi_${i}`,
      aliases: [],
      ts: TS + i * 60_000,
      amount: 2900,
      currency: 'USD',
      status: 'paid',
      is_renewal: false,
    },
  ],
  subscriptions: [],
  customers: [],
});

describe('import payments: progress', () => {
  it('reports crediting, storing, writing each chunk, then recomputing the days and the cohorts', async () => {
    const { conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const seen: PaymentImportProgress[] = [];
    try {
      const site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
      const facts = [1, 2, 3].map(payment);
      await importPayments(dynamoPaymentDeps(conn), site, facts, { chunk: 2, onProgress: (p) => seen.push(p) });
    } finally {
      await close();
    }
    expect(seen.map(({ phase, done, fraction }) => [phase, done, fraction])).toEqual([
      ['crediting payments', 3, 1],
      ['storing payments', 0, 0],
      ['storing payments', 3, 1],
      ['writing payments', 0, 0],
      ['writing payments', 2, 2 / 3],
      ['writing payments', 3, 1],
      ['recomputing days', 3, null],
      ['recomputing cohorts', 3, null],
    ]);
    expect(new Set(seen.map((p) => p.total))).toEqual(new Set([3]));
  });
});
