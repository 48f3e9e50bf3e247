import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { createDynamoConnection, type DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import type { CapacityMeter } from '../lambdas/adapters/dynamo/capacity-meter.js';
import { ensureTable } from '../lambdas/adapters/dynamo/table.js';
import { DATA_LAYOUT } from '../lambdas/domain/site.js';
import { openLocalDynamo, startMemoryDynalite } from '../local/dynalite.js';
import { loadBenchSite, type BenchSite } from './bench-site.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * What the bench site's items are made by: the product's code (its stores,
 * services and domain), the loader and its traffic model, and the locked
 * dependencies. A change to any of them makes a cached table stale.
 */
const CODE = [
  'lambdas',
  'local',
  'bench/bench-site.ts',
  'bench/traffic.ts',
  'bench/memory-stores.ts',
  'package-lock.json',
];

/** The bench site's dimensions a cached table is kept for. */
export interface BenchSiteKey {
  events: number;
  payments: number;
  days: number;
  /** Whether the raw events' Parquet archive (the DuckDB baseline's input) is kept with it. */
  archive: boolean;
}

/** A loaded bench site's table: connection, what was loaded, where the Parquet archive is. */
export interface BenchTable {
  conn: DynamoConnection;
  site: BenchSite;
  /** The raw events as Parquet, or null when `archive` was false. */
  archiveDir: string | null;
  /** True when the table was found in the cache (`FOOTFALL_BENCH_CACHE`) rather than loaded. */
  reused: boolean;
  close(): Promise<void>;
}

/** Files under `path` (itself when a file, none when missing), skipping `node_modules` and dot files. */
async function filesUnder(path: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return [path];
    if (code === 'ENOENT') return [];
    throw error;
  }
  const nested = await Promise.all(
    entries
      .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
      .map((e) => (e.isDirectory() ? filesUnder(join(path, e.name)) : [join(path, e.name)])),
  );
  return nested.flat();
}

/**
 * SHA-256 (hex) of the code that makes the bench site's items (`CODE`, file
 * names and contents, in name order) and `DATA_LAYOUT`.
 */
export async function benchCodeVersion(root = ROOT): Promise<string> {
  const hash = createHash('sha256').update(`layout ${DATA_LAYOUT}\n`);
  const files = (await Promise.all(CODE.map((p) => filesUnder(join(root, p)))))
    .flat()
    .filter((f) => /\.(ts|tsx|js|mjs|json)$/.test(f))
    .sort();
  for (const file of files) hash.update(`${file.slice(root.length)}\n`).update(await readFile(file));
  return hash.digest('hex');
}

/** The cache entry's name for a bench site: its dimensions and the code version, hashed (16 hex digits). */
export function benchCacheName(key: BenchSiteKey, code: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ ...key, code }))
    .digest('hex')
    .slice(0, 16);
}

/** A cache entry's `site.json`: the key and code version it was loaded for, and what was loaded. */
export const cachedSiteSchema = z.object({
  key: z.object({ events: z.number(), payments: z.number(), days: z.number(), archive: z.boolean() }),
  code: z.string(),
  site: z.object({
    site: z.string(),
    account: z.string(),
    now: z.number(),
    watched: z.string().nullable(),
    visits: z.number(),
    pageviews: z.number(),
    payments: z.number(),
    customers: z.number(),
    ms: z.object({ sessionize: z.number(), payments: z.number(), write: z.number() }),
    peakHeapBytes: z.number(),
  }),
});

/** A dynalite on LevelDB in a child process (`bench/dynalite-process.ts`); resolves once it listens. */
async function startDynaliteProcess(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/run-ts.js'), join(ROOT, 'bench/dynalite-process.ts'), dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = new Promise<void>((r) =>
    createInterface({ input: child.stdout! }).on('line', (line) => line === 'ready' && r()),
  );
  const code = await Promise.race([ready.then(() => undefined), exited]);
  if (code !== undefined) throw new Error(`bench dynalite process exited with ${code}`);
  return child;
}

async function stopDynaliteProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The bench site's table (`loadBenchSite`), counted by `meter`.
 *
 * Without `cacheRoot`: an in-memory dynalite in this process, loaded, and
 * dropped (with the Parquet archive) by `close`.
 *
 * With `cacheRoot` (`FOOTFALL_BENCH_CACHE`, `docs/benchmarks.md`): dynalite
 * on LevelDB in a child process, in `<cacheRoot>/<name>` where the name
 * hashes `key` and `benchCodeVersion()`. A complete entry (its `site.json`
 * is written last) is reused as it stands: the same items, Parquet archive
 * and `now` (the range ends when that load ran, not today); any other is
 * deleted and loaded afresh. The items live on disk, not in the heap, and
 * dynalite runs on another core than the loader. Entries are kept; delete
 * the directory to reclaim the space (a few GB at 1M payments).
 *
 * @throws Error when the load fails (the entry is then left incomplete, and reloaded next time)
 */
export async function openBenchTable(
  key: BenchSiteKey,
  meter: CapacityMeter,
  log: (line: string) => void,
  cacheRoot?: string,
): Promise<BenchTable> {
  if (!cacheRoot) {
    const db = await startMemoryDynalite();
    const conn = createDynamoConnection({ table: 'bench', endpoint: db.endpoint, capacityMeter: meter });
    await ensureTable(conn);
    const archiveDir = key.archive ? await mkdtemp(join(tmpdir(), 'ff-bench-archive-')) : null;
    const site = await loadBenchSite(conn, {
      events: key.events,
      payments: key.payments,
      days: key.days,
      archiveDir: archiveDir ?? undefined,
      log,
    });
    return {
      conn,
      site,
      archiveDir,
      reused: false,
      close: async () => {
        conn.doc.destroy();
        await db.close();
        if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
      },
    };
  }
  const code = await benchCodeVersion();
  const dir = join(resolve(cacheRoot), benchCacheName(key, code));
  const siteFile = join(dir, 'site.json');
  const cached = await readFile(siteFile, 'utf8').then(
    (text) => cachedSiteSchema.parse(JSON.parse(text)),
    () => null,
  );
  if (!cached) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
  }
  log(`bench table: ${cached ? 'reusing' : 'loading'} ${dir}`);
  const child = await startDynaliteProcess(dir);
  try {
    const db = await openLocalDynamo(dir, 'cli');
    const conn = createDynamoConnection({
      table: 'bench',
      endpoint: db.endpoint,
      credentials: db.credentials,
      capacityMeter: meter,
    });
    const archiveDir = key.archive ? join(dir, 'archive') : null;
    let site = cached?.site;
    if (!site) {
      await ensureTable(conn);
      site = await loadBenchSite(conn, {
        events: key.events,
        payments: key.payments,
        days: key.days,
        archiveDir: archiveDir ?? undefined,
        log,
      });
      await writeFile(siteFile, `${JSON.stringify({ key, code, site }, null, 2)}\n`);
    }
    return {
      conn,
      site,
      archiveDir,
      reused: cached !== null,
      close: async () => {
        conn.doc.destroy();
        await stopDynaliteProcess(child);
      },
    };
  } catch (error) {
    await stopDynaliteProcess(child);
    throw error;
  }
}
