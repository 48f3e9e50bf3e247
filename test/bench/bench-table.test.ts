import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';
import { benchCacheName, benchCodeVersion, openBenchTable, type BenchSiteKey } from '../../bench/bench-table.js';

/**
 * The bench site's table cache (`FOOTFALL_BENCH_CACHE`, docs/benchmarks.md):
 * a second open of the same dimensions on the same code reuses the loaded
 * table (same items, same `now`) instead of loading it again, and any
 * change of the dimensions or of the code that makes the items names another
 * entry.
 */
const KEY: BenchSiteKey = { events: 4_000, payments: 60, days: 60, archive: false };
const roots: string[] = [];

async function items(conn: DynamoConnection): Promise<string[]> {
  const out: string[] = [];
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table, ConsistentRead: true })) {
    for (const item of page.Items ?? []) out.push(`${item[PK]} ${item[SK]} ${JSON.stringify(item)}`);
  }
  return out.sort();
}

afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe('the bench site table cache', () => {
  it('reuses a loaded table for the same dimensions and code: the same items and now, nothing written', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ff-bench-cache-'));
    roots.push(root);
    const lines: string[] = [];
    const first = await openBenchTable(KEY, new CapacityMeter(), (l) => lines.push(l), root);
    let loaded: string[];
    try {
      expect(first.reused).toBe(false);
      expect(first.site.payments).toBe(KEY.payments);
      loaded = await items(first.conn);
      expect(loaded.length).toBeGreaterThan(100);
    } finally {
      await first.close();
    }

    const meter = new CapacityMeter();
    const second = await openBenchTable(KEY, meter, (l) => lines.push(l), root);
    try {
      expect(second.reused).toBe(true);
      expect(second.site).toEqual(first.site);
      expect(await items(second.conn)).toEqual(loaded);
      // Reusing writes nothing: the requests counted are the scan's reads.
      expect(meter.total().wcu).toBe(0);
    } finally {
      await second.close();
    }
    expect(await readdir(root)).toEqual([benchCacheName(KEY, await benchCodeVersion())]);
    expect(lines.filter((l) => l.startsWith('bench table: '))).toEqual([
      `bench table: loading ${join(root, benchCacheName(KEY, await benchCodeVersion()))}`,
      `bench table: reusing ${join(root, benchCacheName(KEY, await benchCodeVersion()))}`,
    ]);
  }, 300_000);

  it('names an entry by every dimension and the code version', () => {
    const names = new Set([
      benchCacheName(KEY, 'a'),
      benchCacheName(KEY, 'b'),
      benchCacheName({ ...KEY, events: 4_001 }, 'a'),
      benchCacheName({ ...KEY, payments: 61 }, 'a'),
      benchCacheName({ ...KEY, days: 61 }, 'a'),
      benchCacheName({ ...KEY, archive: true }, 'a'),
    ]);
    expect(names.size).toBe(6);
    expect(benchCacheName(KEY, 'a')).toBe(benchCacheName({ ...KEY }, 'a'));
  });

  it('changes the code version when a file of the product changes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ff-bench-code-'));
    roots.push(root);
    const here = join(import.meta.dirname, '..', '..');
    await cp(join(here, 'lambdas', 'domain', 'site.ts'), join(root, 'lambdas', 'domain', 'site.ts'), {
      recursive: true,
    });
    await writeFile(join(root, 'package-lock.json'), '{}');
    const before = await benchCodeVersion(root);
    expect(await benchCodeVersion(root)).toBe(before);
    await writeFile(join(root, 'lambdas', 'domain', 'site.ts'), '// changed\n', { flag: 'a' });
    expect(await benchCodeVersion(root)).not.toBe(before);
  });
});
