import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm package of DuckDB's native library for Lambda's Linux x64 (glibc). */
export const DUCKDB_BINDING = '@duckdb/node-bindings-linux-x64';

/** The binding's package directory (its `package.json`, `duckdb.node`, `libduckdb.so`) and version. */
export interface DuckDbBinding {
  dir: string;
  version: string;
  /** `installed`: from `node_modules` (`npm ci` on Linux x64); `fetched`: from the registry at synth. */
  from: 'installed' | 'fetched';
}

/**
 * Downloads `spec` (`name@version`) from the npm registry as a tarball into `destination` and returns
 * its path: `npm pack`, the deployer's own npm, registry and credentials.
 */
export type PackFetch = (spec: string, destination: string) => string;

const require = createRequire(import.meta.url);
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The `@duckdb/node-bindings` package's manifest, which names the exact version of each platform's library. */
function bindingsManifest(): { dir: string; optionalDependencies?: Record<string, string> } {
  const manifest = require.resolve('@duckdb/node-bindings/package.json');
  return { dir: dirname(manifest), ...(JSON.parse(readFileSync(manifest, 'utf8')) as object) };
}

/** The binding as `@duckdb/node-bindings` (in `bindingsDir`) resolves it, or null when `npm ci` ran on another platform. */
function installedBinding(bindingsDir: string): DuckDbBinding | null {
  let manifest: string;
  try {
    manifest = require.resolve(`${DUCKDB_BINDING}/package.json`, { paths: [bindingsDir] });
  } catch {
    return null;
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return { dir: dirname(manifest), version, from: 'installed' };
}

/**
 * The integrity (`sha512-…`, SRI) that `package-lock.json` records for the binding: `npm ci` on Linux x64
 * installs exactly that tarball, so a fetched one must be it too.
 * @throws Error when the lock file has no entry for the binding or records another version
 */
export function lockedIntegrity(lockFile: string, version: string): string {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as {
    packages?: Record<string, { version?: string; integrity?: string } | undefined>;
  };
  const entry = lock.packages?.[`node_modules/${DUCKDB_BINDING}`];
  if (entry?.version !== version || !entry.integrity)
    throw new Error(`${lockFile} records no integrity for ${DUCKDB_BINDING}@${version}: run npm install to update it`);
  return entry.integrity;
}

/** The SRI string of a file's bytes in `integrity`'s algorithm (npm records sha512). */
function integrityOf(file: string, integrity: string): string {
  const algorithm = integrity.slice(0, integrity.indexOf('-'));
  return `${algorithm}-${createHash(algorithm).update(readFileSync(file)).digest('base64')}`;
}

const npmPack: PackFetch = (spec, destination) => {
  const out = execFileSync('npm', ['pack', spec, '--pack-destination', destination, '--json'], {
    encoding: 'utf8',
    // npm is `npm.cmd` on Windows, which only a shell runs.
    shell: process.platform === 'win32',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(out) as { filename: string }[];
  if (!packed) throw new Error(`npm pack ${spec} printed no tarball`);
  return join(destination, packed.filename);
};

/**
 * The binding fetched from the registry, kept under `cacheDir/<version>/package/` for the next synth.
 * The tarball must have the lock file's integrity (`lockedIntegrity`), checked before it is unpacked;
 * a cached copy is used only when it was unpacked from a tarball of that integrity.
 * @throws Error when the download fails or its integrity is not the locked one
 */
export function fetchedBinding(options: {
  version: string;
  integrity: string;
  cacheDir: string;
  pack?: PackFetch;
}): DuckDbBinding {
  const { version, integrity, cacheDir, pack = npmPack } = options;
  const home = join(cacheDir, version);
  const dir = join(home, 'package');
  const stamp = join(home, 'integrity');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === integrity) return { dir, version, from: 'fetched' };
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'footfall-duckdb-'));
  try {
    const tarball = pack(`${DUCKDB_BINDING}@${version}`, work);
    const actual = integrityOf(tarball, integrity);
    if (actual !== integrity)
      throw new Error(
        `${DUCKDB_BINDING}@${version} from the registry has integrity ${actual}, not the locked ${integrity}`,
      );
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked], { stdio: 'inherit' });
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    renameSync(join(unpacked, 'package'), dir);
    writeFileSync(stamp, integrity);
    return { dir, version, from: 'fetched' };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * DuckDB's Linux x64 library for the filtered reports' layer: the installed one when `npm ci` ran on Linux
 * x64, otherwise the version `@duckdb/node-bindings` requires, fetched from the npm registry at synth and
 * checked against `package-lock.json`'s integrity (`docs/deploy.md`, the `filteredReports` flag), so a
 * deploy from macOS or Windows needs no step of its own.
 * @throws Error when it is neither installed nor fetchable (offline, or an integrity mismatch)
 */
export function duckdbBinding(): DuckDbBinding {
  const bindings = bindingsManifest();
  const installed = installedBinding(bindings.dir);
  if (installed) return installed;
  const version = bindings.optionalDependencies?.[DUCKDB_BINDING];
  if (!version) throw new Error(`@duckdb/node-bindings names no ${DUCKDB_BINDING} version`);
  try {
    return fetchedBinding({
      version,
      integrity: lockedIntegrity(join(PROJECT_ROOT, 'package-lock.json'), version),
      cacheDir: join(PROJECT_ROOT, 'node_modules', '.cache', 'footfall-duckdb'),
    });
  } catch (error) {
    throw new Error(
      `the filtered reports' functions need DuckDB's Linux x64 library (${DUCKDB_BINDING}@${version}), which is not installed and could not be fetched: ${(error as Error).message}. Run \`npm install --no-save --os=linux --cpu=x64 ${DUCKDB_BINDING}\`, or deploy with -c filteredReports=false`,
      { cause: error },
    );
  }
}
