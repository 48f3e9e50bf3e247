import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_GZIP_BUDGET, ensureAppBuilt, firstPageAssets } from '../app/build.js';
import { DynamoUserStore } from '../lambdas/adapters/dynamo/user-store.js';
import { hashPassword } from '../lambdas/domain/auth/password.js';
import { openLocalStore, startLocalService } from '../local/service.js';
import { launchChromium } from '../test/browser/harness.js';
import { benchDynaliteThread, profileMainThread, threadCpu } from './app-cpu.js';
import { loadBenchSite, type BenchSite } from './bench-site.js';
import { benchCacheName, benchCodeVersion, cachedSiteSchema } from './bench-table.js';
import { benchScale, type BenchScale } from './reports.js';
import { percentile, type Figure } from './report.js';

/**
 * The app's bench rows (`docs/benchmarks.md` "The time series and the app"): the JavaScript and CSS the first page
 * loads, gzipped (level 9, as a CDN would serve it), against the 150 KB
 * budget; and the time from navigation to the first drawn chart of the
 * dashboard on the bench site (the report benchmark's scale point,
 * `benchScale`: by default a year of about 1.45M visits and 20,000
 * payments, `loadBenchSite`), in headless Chromium against the local server,
 * with the server's CPU time over the same span (this process: handlers and
 * dynalite, whichever thread it runs in), which the machine's load does not inflate as much.
 */
export async function benchApp(): Promise<Figure[]> {
  const dist = benchAppDist();
  if (!dist) await ensureAppBuilt();
  const assets = firstPageAssets(dist);
  const size = (ext: string) => assets.filter((a) => a.file.endsWith(ext)).reduce((sum, a) => sum + a.gzip, 0);
  return [
    { section: 'app', name: 'first page JS, gzip', value: size('.js') / 1024, unit: 'KiB' },
    { section: 'app', name: 'first page CSS, gzip', value: size('.css') / 1024, unit: 'KiB' },
    {
      section: 'app',
      name: 'first page JS+CSS, gzip',
      value: (size('.js') + size('.css')) / 1024,
      unit: 'KiB',
      target: `≤ ${APP_GZIP_BUDGET / 1024}`,
    },
    ...(await firstChart(dist)),
  ];
}

/**
 * Another build of the app to serve instead of app/dist (`FOOTFALL_BENCH_APP_DIST`, a directory `vite build`
 * wrote), so that two builds are measured back to back on the same cached site and machine; undefined for
 * app/dist, built if stale.
 */
function benchAppDist(): string | undefined {
  return process.env.FOOTFALL_BENCH_APP_DIST || undefined;
}

const EMAIL = 'bench@footfall.dev';
const PASSWORD = 'bench-password-1234';
const RUNS = 5;

/** One load's timings, ms from navigation start (Navigation and Resource Timing, the chart's mark, Chromium's metrics). */
interface LoadTimings {
  /** The page's HTML received (`responseEnd`). */
  html: number;
  /** The document parsed (`domInteractive`): the renderer has the page, and its deferred module scripts may run. */
  parsed: number;
  /** The first of the session check and the chart's series requested (`startTime`): the script has started. */
  requested: number;
  /** The chart's series requested (`startTime`) and received (`responseEnd`). */
  seriesStart: number;
  series: number;
  drawn: number;
  /** The API requests finished by then: the path's last segment, requested and received (ms). */
  api: Array<[string, number, number]>;
  /** The app's files (`/assets/`) loaded by then: their path, and their bytes as served (compressed). */
  assets: Array<[string, number]>;
  /** Chromium's main-thread JavaScript and task time over the load (CDP `Performance.getMetrics`). */
  scriptMs: number;
  taskMs: number;
  /** This process's CPU over the load by thread, ms (`threadCpu`): the main thread, and the others (dynalite's). */
  mainCpuMs: number;
  otherCpuMs: number;
}

/**
 * Runs in the page: its timings once the chart is drawn. A string, not a function: tsx would wrap a function's
 * inner closures in a helper the page does not have.
 */
const LOAD_TIMINGS = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const me = resources.find((e) => e.name.includes('/api/app/me'));
  const series = resources.find((e) => e.name.includes('/timeseries?'));
  return {
    html: nav.responseEnd,
    parsed: nav.domInteractive,
    requested: Math.min(me ? me.startTime : NaN, series ? series.startTime : NaN),
    seriesStart: series ? series.startTime : NaN,
    series: series ? series.responseEnd : NaN,
    drawn: performance.getEntriesByName('ff-chart-drawn')[0].startTime,
    api: resources
      .filter((e) => e.name.includes('/api/'))
      .map((e) => [new URL(e.name).pathname.split('/').pop(), Math.round(e.startTime), Math.round(e.responseEnd)]),
    assets: resources
      .filter((e) => new URL(e.name).pathname.startsWith('/assets/'))
      .map((e) => [new URL(e.name).pathname, e.encodedBodySize]),
    scriptMs: 0,
    taskMs: 0,
  };
})()`;

/**
 * The medians of where a load's time goes (`docs/benchmarks.md` "Navigation to the first chart, broken down"):
 * until the HTML is in, until the script starts its requests (a new tab's renderer, the script's compilation
 * and first statements), the chart's series on the server, from its arrival to the drawn chart; and Chromium's
 * main-thread script and task time, which grow with the machine's load as the wall times do.
 */
function breakdown(range: string, loads: LoadTimings[]): Figure[] {
  const median = (f: (t: LoadTimings) => number) =>
    percentile(
      loads.map(f).sort((a, b) => a - b),
      50,
    );
  const row = (name: string, f: (t: LoadTimings) => number): Figure => ({
    section: 'app',
    name: `bench site dashboard ${range}: ${name}`,
    value: median(f),
    unit: 'ms',
  });
  return [
    row('navigation to HTML received', (t) => t.html),
    row('HTML received to first request', (t) => t.requested - t.html),
    row('HTML received to document parsed', (t) => t.parsed - t.html),
    row('document parsed to first request', (t) => t.requested - t.parsed),
    row('series requested to received', (t) => t.series - t.seriesStart),
    row('series received to chart drawn', (t) => t.drawn - t.series),
    row('Chromium script time', (t) => t.scriptMs),
    row('Chromium task time', (t) => t.taskMs),
    row('server CPU, main thread', (t) => t.mainCpuMs),
    row('server CPU, other threads', (t) => t.otherCpuMs),
  ];
}

/**
 * Navigation to the dashboard's chart drawn (the `ff-chart-drawn` mark the
 * chart sets once per page load, `app/src/components/chart.tsx`), for 30d
 * and 12m: the median of 5 loads in a new tab after one warm-up load, each
 * once the previous page's requests are all answered, with
 * the browser's HTTP cache on (the app's hashed assets are immutable, as
 * they are behind CloudFront). The service's clock is the end of the bench
 * year, so the ranges hold its last days. Each range's rows end with the
 * load's breakdown (`breakdown`); each load's API requests go to stderr.
 * The service runs dynalite as `serve` does, in a thread of its own, unless
 * `FOOTFALL_BENCH_DYNALITE=inline` (`benchDynaliteThread`);
 * `FOOTFALL_BENCH_PROFILE` samples the main thread over each measured load and
 * prints where its CPU went (`profileMainThread`). The site is loaded once
 * per code version with `FOOTFALL_BENCH_CACHE` (`benchAppSite`).
 */
async function firstChart(appDist: string | undefined): Promise<Figure[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ff-bench-app-'));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const site = await benchAppSite(dataDir, benchScale(), log, process.env.FOOTFALL_BENCH_CACHE || undefined);
  const now = site.now;
  const svc = await startLocalService({
    dataDir,
    port: 0,
    app: true,
    ...(appDist ? { appDist } : {}),
    sessionizeIntervalMs: 0,
    clock: () => now,
    dynaliteThread: benchDynaliteThread(),
  });
  const profiling = Boolean(process.env.FOOTFALL_BENCH_PROFILE);
  const browser = await launchChromium();
  try {
    const users = new DynamoUserStore(svc.dynamo);
    await users.add(EMAIL, site.account, new Date(now), 'owner');
    await users.setPassword(EMAIL, await hashPassword(PASSWORD));
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const signIn = await context.newPage();
    await signIn.goto(`${svc.url}/sign-in`);
    await signIn.fill('input[name=email]', EMAIL);
    await signIn.fill('input[name=password]', PASSWORD);
    await Promise.all([signIn.waitForURL(`${svc.url}/`), signIn.click('button[type=submit]')]);
    await signIn.close();
    const figures: Figure[] = [];
    for (const range of ['30d', '12m']) {
      const times: number[] = [];
      const cpu: number[] = [];
      const loads: LoadTimings[] = [];
      const sampled = new Map<string, number>();
      for (let run = 0; run <= RUNS; run++) {
        const page = await context.newPage();
        const cdp = await context.newCDPSession(page);
        await cdp.send('Performance.enable');
        // The server (handlers and dynalite) runs in this process: its CPU time, apart from the machine's load.
        const before = process.cpuUsage();
        const threadsBefore = threadCpu();
        const stopProfile = profiling && run > 0 ? await profileMainThread() : null;
        await page.goto(`${svc.url}/sites/${site.site}?range=${range}`);
        await page.waitForFunction(() => performance.getEntriesByName('ff-chart-drawn').length > 0, null, {
          timeout: 120_000,
        });
        const used = process.cpuUsage(before);
        const threadsAfter = threadCpu();
        for (const [category, ms] of (await stopProfile?.()) ?? [])
          sampled.set(category, (sampled.get(category) ?? 0) + ms / RUNS);
        const metrics = new Map((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
        const timings = (await page.evaluate(LOAD_TIMINGS)) as LoadTimings;
        timings.scriptMs = (metrics.get('ScriptDuration') ?? 0) * 1000;
        timings.taskMs = (metrics.get('TaskDuration') ?? 0) * 1000;
        timings.mainCpuMs = threadsAfter && threadsBefore ? threadsAfter.main - threadsBefore.main : NaN;
        timings.otherCpuMs = threadsAfter && threadsBefore ? threadsAfter.others - threadsBefore.others : NaN;
        const requests = timings.api.map(([name, start, end]) => `${name} ${start}–${end}`).join(', ');
        const files = timings.assets.map(([path, bytes]) => `${path} ${bytes} B`).join(', ');
        log(
          `${range} load ${run}: chart drawn at ${Math.round(timings.drawn)} ms; requests (ms): ${requests}; files: ${files}`,
        );
        if (run > 0) {
          times.push(timings.drawn);
          cpu.push((used.user + used.system) / 1000);
          loads.push(timings);
        }
        // The panels' requests finish before the next load, so that each load meets an idle server.
        await page.waitForLoadState('networkidle');
        await page.close();
      }
      if (profiling)
        log(
          `${range} main thread's CPU per load, sampled (ms): ` +
            [...sampled].map(([category, ms]) => `${category} ${Math.round(ms)}`).join(', '),
        );
      times.sort((a, b) => a - b);
      cpu.sort((a, b) => a - b);
      figures.push(
        {
          section: 'app',
          name: `bench site dashboard ${range}: navigation to first drawn chart`,
          value: percentile(times, 50),
          unit: 'ms',
          target: '≤ 1,000',
        },
        {
          section: 'app',
          name: `bench site dashboard ${range}: server CPU until the chart is drawn`,
          value: percentile(cpu, 50),
          unit: 'ms',
        },
        {
          section: 'app',
          name: `bench site dashboard ${range}: app files loaded by the drawn chart, as served`,
          value: percentile(
            loads.map((t) => t.assets.reduce((sum, [, bytes]) => sum + bytes, 0) / 1024).sort((a, b) => a - b),
            50,
          ),
          unit: 'KiB',
        },
        ...breakdown(range, loads),
      );
    }
    return figures;
  } finally {
    await browser.close();
    await svc.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The bench site (`loadBenchSite`, at `scale`) in the local data directory `dataDir`, as the service reads it
 * (its table in `dataDir/db`); what was loaded.
 *
 * Without `cacheRoot` it is loaded there. With it (`FOOTFALL_BENCH_CACHE`, `docs/benchmarks.md`), the loaded
 * database is kept in `<cacheRoot>/app-<name>`, the name hashing the site's dimensions and the code that makes
 * its items (`benchCacheName`, `benchCodeVersion`: any change to that code or to `DATA_LAYOUT` makes another
 * name), and copied into `dataDir`: the measured service writes its users and sessions to the copy, so a
 * cached entry is never changed after its load. An entry whose `site.json` (written last) is missing or
 * unreadable is loaded again.
 */
async function benchAppSite(
  dataDir: string,
  scale: BenchScale,
  log: (line: string) => void,
  cacheRoot?: string,
): Promise<BenchSite> {
  const options = { events: scale.events, payments: scale.payments };
  const load = async (dir: string) => {
    const started = Date.now();
    const { dynamo, db } = await openLocalStore(dir, 'serve');
    try {
      const site = await loadBenchSite(dynamo, { ...options, log });
      log(`bench site loaded in ${Math.round((Date.now() - started) / 1000)} s`);
      return site;
    } finally {
      dynamo.doc.destroy();
      await db.close();
    }
  };
  if (!cacheRoot) return load(dataDir);
  const key = { ...options, days: 365, archive: false };
  const code = await benchCodeVersion();
  const entry = join(cacheRoot, `app-${benchCacheName(key, code)}`);
  const siteFile = join(entry, 'site.json');
  let cached = await readFile(siteFile, 'utf8').then(
    (text) => cachedSiteSchema.parse(JSON.parse(text)),
    () => null,
  );
  if (!cached) {
    log(`bench app site: loading ${entry}`);
    await rm(entry, { recursive: true, force: true });
    await mkdir(entry, { recursive: true });
    const site = await load(entry);
    cached = { key, code, site };
    await writeFile(siteFile, `${JSON.stringify(cached, null, 2)}\n`);
  } else log(`bench app site: reusing ${entry}`);
  const started = Date.now();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await cp(join(entry, 'db'), join(dataDir, 'db'), { recursive: true });
  log(`bench app site: copied in ${Math.round((Date.now() - started) / 1000)} s`);
  return cached.site;
}
