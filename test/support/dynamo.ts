import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { createDynamoConnection, type DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import type { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { startMemoryDynalite } from '../../local/dynalite.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { site } from './events.js';

let tables = 0;

/**
 * An in-memory dynalite with a fresh table and account `acme` owning the given sites. With
 * `capacityMeter`, every request is counted (`conn.meter`); the set-up's own requests are forgotten.
 * `maxAttempts` is 1 (no SDK retries) unless a test blocks the event loop long
 * enough for the server to close an idle keep-alive socket (as AWS does too).
 */
export async function memoryTable(
  sites: Array<Partial<SiteConfig>> = [{}],
  options: { capacityMeter?: CapacityMeter; maxAttempts?: number } = {},
): Promise<{ conn: DynamoConnection; close(): Promise<void> }> {
  const db = await startMemoryDynalite();
  const conn = createDynamoConnection({
    table: `t${++tables}xx`,
    endpoint: db.endpoint,
    ...options,
    maxAttempts: options.maxAttempts ?? 1,
  });
  await ensureTable(conn);
  const config = new DynamoConfigStore(conn);
  await config.addAccount('acme', new Date());
  for (const s of sites) await config.addSite(site(s));
  options.capacityMeter?.reset();
  return {
    conn,
    close: async () => {
      conn.doc.destroy();
      await db.close();
    },
  };
}

/**
 * A table (`memoryTable` of `sites`) shared by the tests of the calling `describe`: opened before them, closed
 * after. @returns its connection, once the tests run
 */
export function suiteTable(sites: Array<Partial<SiteConfig>> = []): () => DynamoConnection {
  let db: Awaited<ReturnType<typeof memoryTable>> | undefined;
  beforeAll(async () => {
    db = await memoryTable(sites);
  });
  afterAll(async () => db?.close());
  return () => {
    if (!db) throw new Error('the suite table is opened before the tests');
    return db.conn;
  };
}

/** Every item of the table, sorted by key, without the attributes in `omit`. */
export async function scanAll(
  conn: DynamoConnection,
  omit: readonly string[] = [],
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table }))
    items.push(...(page.Items ?? []));
  return items
    .map((item) =>
      Object.fromEntries(
        Object.entries(item)
          .filter(([k]) => !omit.includes(k))
          .map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v]),
      ),
    )
    .sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
}
