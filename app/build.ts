/**
 * Builds the single-page app (app/src, Preact + uPlot, bundled by Vite) into
 * static files in app/dist/, which the local server serves at `/` and the
 * stack uploads to S3 (docs/app.md).
 *
 * `ensureAppBuilt()` is what `npm start`, `footfall serve --app` and the
 * browser tests' global setup call: it rebuilds only when the sources or the
 * locked dependencies changed since the last build (a SHA-256 over them,
 * kept beside the build), so a fresh clone builds once (about a second) and
 * later starts cost a hash. Run directly (`npm run build:app`) it always
 * builds and prints the first page's size against its budget.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The app's directory and its build output. */
export const APP_DIR = fileURLToPath(new URL('.', import.meta.url));
export const APP_DIST = join(APP_DIR, 'dist');

/** Budget for the first page's JavaScript and CSS, gzipped (issue 17): 150 KB. */
export const APP_GZIP_BUDGET = 150 * 1024;

const HASH_FILE = join(APP_DIST, '.source-hash');
const ROOT = resolve(APP_DIR, '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * SHA-256 (hex) over everything the build reads: the app's sources and config
 * and the lock file (a dependency upgrade changes the bundle too).
 */
export function appSourceHash(): string {
  const inputs = [
    join(APP_DIR, 'index.html'),
    join(APP_DIR, 'vite.config.ts'),
    join(APP_DIR, 'tsconfig.json'),
    join(ROOT, 'package-lock.json'),
    ...filesUnder(join(APP_DIR, 'src')),
  ].sort();
  const hash = createHash('sha256');
  for (const file of inputs) {
    hash.update(relative(ROOT, file)).update('\0');
    if (existsSync(file)) hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Builds app/dist/ now with Vite (its production build), and records the source hash it was built from. */
export async function buildApp(): Promise<void> {
  const hash = appSourceHash();
  const { build } = await import('vite');
  await build({ configFile: join(APP_DIR, 'vite.config.ts'), logLevel: 'warn' });
  writeFileSync(HASH_FILE, `${hash}\n`);
}

/** Whether app/dist/ holds a build of the current sources. */
export function appIsFresh(): boolean {
  if (!existsSync(join(APP_DIST, 'index.html')) || !existsSync(HASH_FILE)) return false;
  return readFileSync(HASH_FILE, 'utf8').trim() === appSourceHash();
}

/** Builds the app when app/dist/ is missing or stale; resolves with what it did. */
export async function ensureAppBuilt(log: (line: string) => void = () => undefined): Promise<'fresh' | 'built'> {
  if (appIsFresh()) return 'fresh';
  log('Building the app (app/ → app/dist/)…');
  await buildApp();
  return 'built';
}

/** One file the first page loads, with its size raw and gzipped (level 9), bytes. */
export interface AssetSize {
  file: string;
  raw: number;
  gzip: number;
}

/**
 * The JavaScript and CSS the first page loads: the scripts, module preloads
 * and stylesheets named in app/dist/index.html (chunks loaded later on demand
 * are not counted), each with its raw and gzipped size.
 */
export function firstPageAssets(dist = APP_DIST): AssetSize[] {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="(\/assets\/[^"]+\.(?:js|css))"/g)].map(
    (m) => m[1]!,
  );
  return [...new Set(refs)].map((ref) => {
    const body = readFileSync(join(dist, ref));
    return { file: ref, raw: statSync(join(dist, ref)).size, gzip: gzipSync(body, { level: 9 }).length };
  });
}

// Run directly (`npm run build:app`): build, then print the first page's size against the budget.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await buildApp();
  const assets = firstPageAssets();
  for (const a of assets) console.log(`app/dist${a.file}  raw ${a.raw} B  gzip ${a.gzip} B`);
  const total = assets.reduce((sum, a) => sum + a.gzip, 0);
  console.log(`first page JS+CSS gzip ${(total / 1024).toFixed(1)} KiB (budget ${APP_GZIP_BUDGET / 1024} KiB)`);
  if (total > APP_GZIP_BUDGET) process.exitCode = 1;
}
