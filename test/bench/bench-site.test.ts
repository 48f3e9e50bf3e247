import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { startMemoryDynalite } from '../../local/dynalite.js';
import { createDynamoConnection, type DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable, PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore, visitorPk } from '../../lambdas/adapters/dynamo/visit-store.js';
import { toSequenceNumber } from '../../lambdas/adapters/local-stream.js';
import { sessionizeBatch, type SessionizeRecord } from '../../lambdas/services/sessionize.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { namespaceOf, type SiteConfig } from '../../lambdas/domain/site.js';
import type { ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import { compared, normalize } from '../support/comparable-items.js';
import {
  BENCH_ACCOUNT,
  BENCH_SITE,
  benchRate,
  benchSiteConfig,
  benchTraffic,
  loadBenchSite,
  type BenchSite,
} from '../../bench/bench-site.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * The report benchmark's loader (`bench/bench-site.ts`) writes what the
 * product writes: a small bench site (90 days, 6,000 events, 100 payments of
 * subscribing customers) is loaded once by the loader (sessionizer and
 * payment service on in-memory stores, batches of 2,000 events, items
 * written in bulk) and once through DynamoDB as the stack does it (the
 * sessionizer in batches of 300 events on the DynamoDB stores, the rollup log
 * compacted every 5 batches, then every webhook one by one through the
 * payment service), and the two tables are compared item by item. The
 * loader writes its payments in chunks of about 7 (whole customers at a
 * time), so the comparison crosses a dozen chunk boundaries of the bulk load.
 */
const EVENTS = 6_000;
const PAYMENTS = 100;
const DAYS = 90;
const NOW = Date.UTC(2026, 10, 20, 10, 30);

async function tableItems(
  conn: DynamoConnection,
  watched: string | null,
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const visitsPk = visitorPk(BENCH_SITE, watched ?? '');
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table, ConsistentRead: true })) {
    for (const item of page.Items ?? []) {
      const type = String(item.type ?? '');
      // Not compared by design: the write paths' bookkeeping (`comparable-items.ts`), VISIT items of visitors
      // other than the timeline's (no report reads them), the configuration.
      if (!compared(item)) continue;
      if ((type === 'VISIT' || type === 'VISIT_CHUNK') && item[PK] !== visitsPk) continue;
      if (!String(item[PK]).includes(BENCH_SITE)) continue;
      out.set(`${item[PK]} ${item[SK]}`, normalize(item));
    }
  }
  return out;
}

describe('the bench site loader', () => {
  let db: Awaited<ReturnType<typeof startMemoryDynalite>>;
  let bulk: DynamoConnection;
  let real: DynamoConnection;
  let loaded: BenchSite;
  const webhooks: ProviderFacts[] = [];

  beforeAll(async () => {
    db = await startMemoryDynalite();
    bulk = createDynamoConnection({ table: 'bulk', endpoint: db.endpoint });
    real = createDynamoConnection({ table: 'real', endpoint: db.endpoint });
    await ensureTable(bulk);
    await ensureTable(real);
    loaded = await loadBenchSite(bulk, {
      events: EVENTS,
      payments: PAYMENTS,
      days: DAYS,
      now: NOW,
      batchEvents: 2_000,
      paymentChunk: 7,
      onWebhook: (w) => webhooks.push(w),
    });

    // The same events and webhooks the way the stack takes them.
    const config = new DynamoConfigStore(real);
    await config.addAccount(BENCH_ACCOUNT, new Date(NOW));
    await config.addSite(benchSiteConfig(new Date(NOW).toISOString()));
    const site = (await config.getSite(BENCH_SITE)) as SiteConfig;
    const rollups = new DynamoRollupStore(real);
    const visits = new DynamoVisitStore(real);
    let records: SessionizeRecord[] = [];
    let sequence = 0;
    let batch = 0;
    const flush = async () => {
      if (records.length === 0) return;
      await sessionizeBatch(
        { sites: config, visits, rollups },
        { shard: 'shardId-000000000000', sequence: (records[records.length - 1] as SessionizeRecord).sequenceNumber },
        records,
      );
      records = [];
      if (++batch % 5 === 0) await rollups.compact(namespaceOf(site));
    };
    for (const e of benchTraffic(EVENTS, NOW, DAYS)) {
      records.push({ sequenceNumber: toSequenceNumber(++sequence), data: Buffer.from(JSON.stringify(e)) });
      if (records.length === 300) await flush();
    }
    await flush();
    await rollups.compact(namespaceOf(site));
    const deps = { ...dynamoPaymentDeps(real, () => NOW), rates: async () => benchRate };
    for (const w of webhooks) await applyProviderFacts(deps, site, w);
  }, 600_000);

  afterAll(async () => {
    bulk?.doc.destroy();
    real?.doc.destroy();
    await db?.close();
  });

  it('holds subscriptions, renewals, refunds, cancellations and unattributed payments', () => {
    const payments = webhooks.flatMap((w) => w.payments);
    expect(loaded.payments).toBe(PAYMENTS);
    expect(payments.filter((p) => p.is_renewal === true).length).toBeGreaterThan(0);
    expect(payments.filter((p) => p.status === 'refunded').length).toBeGreaterThan(0);
    expect(payments.filter((p) => p.is_renewal === false && p.visitor_id === undefined).length).toBeGreaterThan(0);
    expect(webhooks.flatMap((w) => w.subscriptions).filter((s) => s.status === 'canceled').length).toBeGreaterThan(0);
    expect(loaded.watched).not.toBeNull();
  });

  it('writes exactly the items the sessionizer, the compactor and the payment service write', async () => {
    const [ours, theirs] = await Promise.all([tableItems(bulk, loaded.watched), tableItems(real, loaded.watched)]);
    const types = (m: Map<string, Record<string, unknown>>) =>
      [...new Set([...m.values()].map((i) => String(i.type)))].sort();
    expect(types(ours)).toEqual(types(theirs));
    for (const type of ['ROLLUP', 'PAYMENT', 'CUSTOMER', 'PAYMENT_LIST', 'PAYMENT_TOTALS', 'VISITOR_PAYMENT', 'VISIT'])
      expect(types(ours)).toContain(type);
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
    const differences = [...theirs]
      .filter(([key, item]) => !isDeepStrictEqual(ours.get(key), item))
      .map(([key, item]) => ({ key, loader: ours.get(key), stack: item }));
    expect(differences.slice(0, 3)).toEqual([]);
    expect(differences.length).toBe(0);
  });
});
