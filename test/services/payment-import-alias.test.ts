import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { PARTITIONS } from '../../lambdas/adapters/dynamo/items.js';
import { PK } from '../../lambdas/adapters/dynamo/table.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';

/**
 * An import writes no PAYMENT_ALIAS of a payment's own id (its PAYMENT item stands for it,
 * `docs/data-model.md`): one item fewer per payment. A later event that names the imported id
 * as an alias of a new id must still land on the imported row, as it did when the alias existed.
 */
const NOW = Date.UTC(2026, 5, 1);
const DAY = 86_400_000;

const fact = (id: string, aliases: string[], ts: number, amount = 2900): PaymentFact => ({
  provider: 'stripe',
  id,
  aliases,
  ts,
  amount,
  currency: 'USD',
  status: 'paid',
  is_renewal: false,
});
const facts = (f: PaymentFact): ProviderFacts => ({
  event_id: `evt_${f.id}_${f.aliases.join('_')}`,
  event_type: 'test',
  payments: [f],
  subscriptions: [],
  customers: [],
});

async function aliasIds(conn: DynamoConnection): Promise<string[]> {
  const ids: string[] = [];
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk`,
    ExpressionAttributeValues: { ':pk': PARTITIONS.paymentAlias.key('example.com', 'stripe') },
  };
  for await (const page of paginateQuery({ client: conn.doc }, query))
    for (const item of page.Items ?? []) ids.push(`${String(item.sk)}->${String(item.payment_id)}`);
  return ids.sort();
}

describe('import payments: the PAYMENT item is its own alias', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let site: SiteConfig;

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]));
    site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
  });
  afterAll(async () => close());

  it('writes aliases for other ids only, and a later event naming the imported id joins its row', async () => {
    const deps = dynamoPaymentDeps(conn, () => NOW);
    const outcome = await importPayments(deps, site, [
      facts(fact('pi_1', [], NOW - 10 * DAY)),
      facts(fact('pi_2', ['in_2'], NOW - 9 * DAY)),
    ]);
    expect(outcome).toEqual({ payments: 2, settledOneByOne: 0 });
    // pi_1 and pi_2 have no alias item; in_2 points at pi_2.
    expect(await aliasIds(conn)).toEqual(['in_2->pi_2']);
    expect(await deps.payments.findPaymentIds('example.com', 'stripe', ['pi_1'])).toEqual(['pi_1']);
    expect(await deps.payments.findPaymentIds('example.com', 'stripe', ['in_2', 'pi_2'])).toEqual(['pi_2']);

    // The invoice of pi_1 arrives by webhook under its own id, naming pi_1: one row, refunded in full.
    const refund = { ...fact('in_1', ['pi_1'], NOW - 10 * DAY), refunded: 2900 };
    await applyProviderFacts(deps, site, facts(refund));
    expect(await deps.payments.getPayment('example.com', 'stripe', 'in_1')).toBeNull();
    const row = await deps.payments.getPayment('example.com', 'stripe', 'pi_1');
    expect(row?.refunded).toBe(2900);
    expect(await deps.payments.findPaymentIds('example.com', 'stripe', ['in_1'])).toEqual(['pi_1']);

    // A rerun of the same import finds every row (none new, none changed): nothing doubles.
    const again = await importPayments(deps, site, [
      facts(fact('pi_1', [], NOW - 10 * DAY)),
      facts(fact('pi_2', ['in_2'], NOW - 9 * DAY)),
    ]);
    expect(again).toEqual({ payments: 2, settledOneByOne: 0 });
    // pi_1 was read back, not taken for new: the refund the webhook merged into it stays.
    expect((await deps.payments.getPayment('example.com', 'stripe', 'pi_1'))?.refunded).toBe(2900);
    expect((await deps.payments.listPayments('example.com')).map((p) => p.provider_payment_id).sort()).toEqual([
      'pi_1',
      'pi_2',
    ]);
  });
});
