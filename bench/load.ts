import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../lambdas/adapters/dynamo/rollup-store.js';
import { eventsOfItem } from '../lambdas/adapters/dynamo/visit-store.js';
import { PARTITIONS } from '../lambdas/adapters/dynamo/items.js';
import { namespaceOf, writeTargets } from '../lambdas/domain/site.js';
import { readLocalStream, STREAM_FILE } from '../lambdas/adapters/local-stream.js';
import { parseUserAgent } from '../lambdas/domain/user-agent.js';
import { SESSIONIZER, archiveDeliveryDir } from '../local/consumers.js';
import { LocalArchiveDeliveryPoller } from '../local/archive-delivery.js';
import { REFERRERS, browserUserAgents, rng, zipf } from '../local/demo/workload.js';
import { localPaths, openLocalStore } from '../local/service.js';
import { runSql } from '../local/sql.js';

/**
 * Sustained load on a `footfall serve` running in its own process, and the
 * accounting of every accepted event afterwards (`docs/reliability.md`).
 *
 * - `runLoad`: autocannon over loopback, POST /api/event with single events
 *   and arrays of 10–50, real browser User-Agents, several sites and visitors,
 *   pages from a realistic set; every event carries a unique token
 *   (`utm_content=<run>-<n>` in its URL), so each 202 the client receives is
 *   recorded as the exact set of events it acknowledged. The token goes to the
 *   stream and the archive but into no rollup: a unique path per event would
 *   have grown the page rollups as no real site does.
 * - `waitForCatchUp`: until the sessionizer's and the archive's checkpoints
 *   reach the end of the stream.
 * - `accountEvents`: the events on the stream, in the Parquet archive and in
 *   the sessionized visits (and the visits rollups), by event id.
 *
 * Run directly for the docs' figures:
 * `node bin/run-ts.js bench/load.ts [seconds] [connections] [requests per second]`.
 */

const CLI = fileURLToPath(new URL('../bin/footfall.js', import.meta.url));

/** The sites the load is spread over (each with a rate limit far above the load). */
export const LOAD_SITES = ['shop.load.test', 'blog.load.test', 'docs.load.test'] as const;

/** Creates account `load` and the sites in a fresh data directory (no server running). */
export async function prepareDataDir(dataDir: string, sites: readonly string[] = LOAD_SITES): Promise<void> {
  const { dynamo, db } = await openLocalStore(dataDir, 'cli');
  try {
    const config = new DynamoConfigStore(dynamo);
    await config.addAccount('load', new Date());
    for (const domain of sites) {
      await config.addSite({
        domain,
        timezone: 'UTC',
        account: 'load',
        attribution: 'last_non_direct',
        lookback_days: 30,
        rate_limit: 1_000_000,
        created: new Date().toISOString(),
      });
    }
  } finally {
    dynamo.doc.destroy();
    await db.close();
  }
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts `footfall --data DIR serve --port 0 --json …` in a child process; resolves once it listens. */
export async function startServe(dataDir: string, extra: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, '--data', dataDir, 'serve', '--port', '0', '--json', ...extra], {
    env: { ...process.env, FOOTFALL_DATA: '', PORT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + String(d)).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 60_000);
    lines.on('line', (line) => {
      buffer += line;
      try {
        const parsed = JSON.parse(buffer) as { url: string };
        clearTimeout(timer);
        resolve(parsed.url);
      } catch {
        // Pretty-printed JSON spans several lines.
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr };
}

/** Stops a serve process with SIGTERM (graceful: it closes its pollers, stream and database). */
export async function stopServe(serve: ServeProcess): Promise<void> {
  if (serve.child.exitCode !== null || serve.child.signalCode !== null) return;
  serve.child.kill('SIGTERM');
  await serve.exited;
}

export interface LoadOptions {
  url: string;
  /** How long the load runs, seconds. */
  seconds: number;
  /** Upper bound on requests, whatever the duration. */
  maxRequests?: number;
  connections?: number;
  /** Requests per second over all connections; unset: as fast as the server answers. */
  rate?: number;
  sites?: readonly string[];
  /** Visitor ids per site. */
  visitorsPerSite?: number;
  /** Tag of this run, in every event's token: runs on one data directory stay distinguishable. */
  run?: string;
  seed?: number;
}

export interface LoadResult {
  seconds: number;
  /** Responses received. */
  requests: number;
  requestsPerSecond: number;
  /** Events in requests answered 202. */
  eventsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Responses by status code. */
  statuses: Record<string, number>;
  /** Connection errors (including timeouts), and timeouts alone. */
  errors: number;
  timeouts: number;
  /** Tokens of every event of every request answered 202, in answer order. */
  accepted: string[];
  /** Tokens of every event of every request sent (answered or not). */
  sent: string[];
}

/** User-Agents of real browsers that the service does not take for bots (and that fit in an HTTP header). */
export function loadUserAgents(): string[] {
  return browserUserAgents().filter((ua) => /^[\x20-\x7e]+$/.test(ua) && !parseUserAgent(ua).bot);
}

const LANGUAGES = ['en-US,en;q=0.9', 'de-DE,de;q=0.8,en;q=0.5', 'fr-FR,fr;q=0.9', 'ja-JP', 'pt-BR,pt;q=0.9'];
const COUNTRIES = ['US', 'DE', 'FR', 'JP', 'BR', 'GB', 'IN'];
const WIDTHS = [390, 414, 768, 1024, 1280, 1440, 1920];

/** A request of the load: headers, body, and the token of each of its events. */
export interface LoadRequest {
  headers: Record<string, string>;
  body: string;
  tokens: string[];
}

/** Pages of a site: a few popular ones and a long tail. */
const PAGES = [
  '/',
  '/pricing',
  '/features',
  '/signup',
  '/docs',
  '/docs/install',
  '/blog',
  ...Array.from({ length: 150 }, (_, i) => `/blog/post-${i}`),
];

/**
 * The load's request generator. Half of the requests carry one event, half an
 * array of 10–50 (all of one site); 10% of events are goals; 2% carry no
 * visitor id (the daily hash is used). Deterministic for a seed.
 */
export function loadRequests(
  options: { sites?: readonly string[]; visitorsPerSite?: number; run?: string; seed?: number } = {},
): () => LoadRequest {
  const random = rng(options.seed ?? 11);
  const sites = options.sites ?? LOAD_SITES;
  const visitors = options.visitorsPerSite ?? 500;
  const run = options.run ?? 'r';
  const agents = loadUserAgents();
  let next = 0;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const event = (site: string) => {
    const token = `${run}-${next++}`;
    const goal = random() < 0.1;
    const campaign = random() < 0.1 ? 'utm_source=newsletter&utm_medium=email&utm_campaign=spring&' : '';
    return {
      token,
      event: {
        n: goal ? 'goal' : 'pageview',
        u: `https://${site}${zipf(PAGES, random)}?${campaign}utm_content=${token}`,
        s: site,
        r: random() < 0.4 ? pick(REFERRERS) : null,
        ...(random() < 0.02 ? {} : { v: `load-${run}-${site.split('.')[0]}-${Math.floor(random() * visitors)}` }),
        w: pick(WIDTHS),
        ...(goal ? { g: pick(['Signup', 'Checkout', 'Outbound Link: Click']) } : {}),
      },
    };
  };
  return () => {
    const site = pick(sites);
    const count = random() < 0.5 ? 1 : 10 + Math.floor(random() * 41);
    const events = Array.from({ length: count }, () => event(site));
    return {
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'user-agent': pick(agents),
        'accept-language': pick(LANGUAGES),
        'x-country-code': pick(COUNTRIES),
      },
      body: JSON.stringify(count === 1 ? events[0]?.event : events.map((e) => e.event)),
      tokens: events.map((e) => e.token),
    };
  };
}

/** Runs the load (`loadRequests`); `stop()` ends it early (within about 250 ms). */
export function runLoad(options: LoadOptions): { done: Promise<LoadResult>; stop(): void } {
  const nextRequest = loadRequests(options);
  const accepted: string[] = [];
  const sent: string[] = [];
  const started = Date.now();
  const instance = autocannon(
    {
      url: options.url,
      connections: options.connections ?? 8,
      duration: options.seconds,
      maxOverallRequests: options.maxRequests ?? 10_000_000,
      timeout: 10,
      sampleInt: 250,
      ...(options.rate ? { overallRate: options.rate, ignoreCoordinatedOmission: true } : {}),
      requests: [
        {
          setupRequest: (request, context) => {
            const { headers, body, tokens } = nextRequest();
            (context as { tokens?: string[] }).tokens = tokens;
            sent.push(...tokens);
            return { ...request, method: 'POST', path: '/api/event', headers, body };
          },
          onResponse: (status, _body, context) => {
            if (status === 202) accepted.push(...((context as { tokens?: string[] }).tokens ?? []));
          },
        },
      ],
    },
    () => undefined,
  );
  const done = new Promise<LoadResult>((resolve, reject) => {
    instance.once('error', reject);
    instance.once('done', (result: autocannon.Result) => {
      const seconds = (Date.now() - started) / 1000;
      const statuses = Object.fromEntries(
        Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
      );
      const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
      resolve({
        seconds,
        requests,
        requestsPerSecond: requests / seconds,
        eventsPerSecond: accepted.length / seconds,
        latencyMs: {
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max,
        },
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        accepted,
        sent,
      });
    });
  });
  return { done, stop: () => (instance as unknown as { stop(): void }).stop() };
}

/** Byte offset where a consumer's checkpoint stands. */
async function checkpointOf(dataDir: string, consumer: string): Promise<number> {
  try {
    const file = join(localPaths(dataDir).stream, 'checkpoints', `${consumer}.json`);
    return (JSON.parse(await readFile(file, 'utf8')) as { offset: number }).offset;
  } catch {
    return 0;
  }
}

/** The archive delivery of a serve's data directory, to see what it has not converted yet. */
const archiveDelivery = (dataDir: string) =>
  new LocalArchiveDeliveryPoller(archiveDeliveryDir(localPaths(dataDir).stream), async () => null);

/**
 * Waits until the sessionizer and the archive of a running serve have taken in
 * the whole stream; returns how long that took, ms.
 * @throws after `timeoutMs`
 */
export async function waitForCatchUp(dataDir: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  const file = join(localPaths(dataDir).stream, STREAM_FILE);
  for (;;) {
    const end = (await stat(file)).size;
    // The archive is fed by the sessionizer: caught up once nothing waits in its delivery.
    const sessionized = await checkpointOf(dataDir, SESSIONIZER);
    const unarchived = (await archiveDelivery(dataDir).pending()).length;
    if (sessionized >= end && unarchived === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `not caught up after ${timeoutMs} ms: stream ${end} B, sessionized ${sessionized}, ${unarchived} deliveries not archived`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One event as found in one place: its id, its load token (not kept in visits) and kind. */
export interface FoundEvent {
  id: string;
  token: string | null;
  goal: boolean;
}

export interface Accounting {
  stream: FoundEvent[];
  /** Lines of the stream log skipped as torn (a write cut by kill -9; never acknowledged). */
  tornLines: number;
  archive: FoundEvent[];
  /** Every event of every VISIT item (a full table scan). */
  visits: FoundEvent[];
  visitItems: number;
  /** Sums over the day rollups of every site: visits and page views. */
  rollups: { visits: number; pageviews: number };
}

/**
 * Where every event is: the stream log (`readLocalStream`), the Parquet archive
 * (`runSql`, what `footfall sql` runs), and the sessionized visits and rollups
 * (a scan of the table, through the running serve's dynalite or a dynalite of
 * our own when none runs).
 */
export async function accountEvents(dataDir: string): Promise<Accounting> {
  const paths = localPaths(dataDir);
  const { records, corrupt } = await readLocalStream(paths.stream, 0, Number.MAX_SAFE_INTEGER);
  const stream = records.map((r) => {
    const e = JSON.parse(r.data.toString('utf8')) as { event_id: string; utm_content: string | null; type: string };
    return { id: e.event_id, token: e.utm_content, goal: e.type === 'goal' };
  });
  const rows = await runSql(paths.archive, 'SELECT event_id, utm_content, type FROM events');
  const archive = rows.rows.map(([id, token, type]) => ({
    id: String(id),
    token: token === null ? null : String(token),
    goal: type === 'goal',
  }));

  const visits: FoundEvent[] = [];
  const rollups = { visits: 0, pageviews: 0 };
  let visitItems = 0;
  const { dynamo, db } = await openLocalStore(dataDir, 'cli');
  try {
    // Rollup deltas not folded yet are in the log: fold them, so the day items hold every visit.
    const rollupStore = new DynamoRollupStore(dynamo);
    for (const site of await new DynamoConfigStore(dynamo).listSites())
      for (const target of writeTargets(site)) await rollupStore.compact(namespaceOf(target));
    for await (const page of paginateScan({ client: dynamo.doc }, { TableName: dynamo.table, ConsistentRead: true })) {
      for (const item of page.Items ?? []) {
        // A long visit keeps its events in VISIT_CHUNK items besides its VISIT item.
        if (item.type === 'VISIT_CHUNK' || item.type === 'VISIT') {
          if (item.type === 'VISIT') visitItems++;
          for (const e of eventsOfItem(item)) visits.push({ id: e.id, token: null, goal: e.type === 'goal' });
        } else if (
          item.type === 'ROLLUP' &&
          /^R#.*#visits$/.test(String(item.pk)) &&
          String(item.sk).startsWith(PARTITIONS.rollup.items.ROLLUP.range.granularity('D'))
        ) {
          rollups.visits += Number(item.visits ?? 0);
          rollups.pageviews += Number(item.pageviews ?? 0);
        }
      }
    }
  } finally {
    dynamo.doc.destroy();
    await db.close();
  }
  return { stream, tornLines: corrupt, archive, visits, visitItems, rollups };
}

/** A short summary of an accounting: counts, distinct ids, and whether the three places agree. */
export function summarize(a: Accounting) {
  const ids = (list: FoundEvent[]) => new Set(list.map((e) => e.id));
  const streamIds = ids(a.stream);
  const same = (list: FoundEvent[]) => list.length === streamIds.size && list.every((e) => streamIds.has(e.id));
  return {
    stream: a.stream.length,
    streamDistinct: streamIds.size,
    archive: a.archive.length,
    archiveDistinct: ids(a.archive).size,
    visits: a.visits.length,
    visitsDistinct: ids(a.visits).size,
    visitItems: a.visitItems,
    rollupVisits: a.rollups.visits,
    rollupPageviews: a.rollups.pageviews,
    streamPageviews: a.stream.filter((e) => !e.goal).length,
    archiveMatchesStream: same(a.archive),
    visitsMatchStream: same(a.visits),
    tornLines: a.tornLines,
  };
}

/** `node bin/run-ts.js bench/load.ts [seconds] [connections] [rate]`: one load run on a fresh data directory, as JSON. */
async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 60);
  const connections = Number(process.argv[3] ?? 8);
  const rate = process.argv[4] ? Number(process.argv[4]) : undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'ff-load-'));
  try {
    await prepareDataDir(dataDir);
    const serve = await startServe(dataDir, ['--sessionize-interval', '1000']);
    try {
      const load = await runLoad({ url: serve.url, seconds, connections, rate }).done;
      const catchUpMs = await waitForCatchUp(dataDir, 600_000);
      const summary = summarize(await accountEvents(dataDir));
      const { accepted, sent, ...figures } = load;
      console.log(
        JSON.stringify(
          { ...figures, acceptedEvents: accepted.length, sentEvents: sent.length, catchUpMs, ...summary },
          null,
          2,
        ),
      );
    } finally {
      await stopServe(serve);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
