import { build, type Metafile } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { DUCKDB_CHUNK, lambdaBuildOptions } from '../bench/bundle.js';
import { FUNCTIONS } from '../lib/functions.js';
import { PROJECT_ROOT } from '../lib/lambda-defaults.js';
import { dict } from '../lambdas/domain/dict.js';

/** A third-party package that ships: bundled into a Lambda function or the app, or provided by the Lambda runtime. */
export interface ShippedPackage {
  name: string;
  version: string;
  /** The SPDX expression of its package.json (`license`, or the older `licenses` list), or `UNKNOWN`. */
  licence: string;
  /** Where it ships: function names, `app`, or `runtime` (left external: the AWS SDK of the Node.js 22 runtime). */
  shippedIn: string[];
}

/**
 * Licences that would oblige the whole bundle to be released under them (the GNU family: GPL,
 * AGPL, LGPL, whose linking terms a single minified bundle cannot meet): a package licensed only
 * under them must not ship (`docs/security.md`, "Dependency review").
 */
const COPYLEFT = /\b(A|L)?GPL\b|GNU (Affero |Lesser )?General Public/i;

/** Whether an SPDX expression leaves no choice but a GNU licence (`MIT OR GPL-3.0` does; `GPL-3.0` does not). */
export function onlyCopyleft(licence: string): boolean {
  const choices = licence.replace(/[()]/g, '').split(/\s+OR\s+/i);
  return choices.every((c) => COPYLEFT.test(c));
}

/** The package a bundled file belongs to: the package.json of its directory right under the last node_modules. */
function packageOf(file: string): { name: string; version: string; licence: string } | null {
  const parts = file.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return null;
  const root = parts.slice(0, at + (parts[at + 1]!.startsWith('@') ? 3 : 2)).join(sep);
  const path = join(root, 'package.json');
  if (!existsSync(path)) return null;
  const pkg = dict<unknown>();
  Object.assign(pkg, JSON.parse(readFileSync(path, 'utf8')) as object);
  return { name: String(pkg.name), version: String(pkg.version ?? ''), licence: licenceOf(pkg) };
}

function licenceOf(pkg: Record<string, unknown>): string {
  const value = pkg.license ?? pkg.licenses;
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'type' in value) return String(value.type);
  if (Array.isArray(value))
    return value.map((v: unknown) => (v && typeof v === 'object' && 'type' in v ? String(v.type) : '?')).join(' OR ');
  return 'UNKNOWN';
}

async function inputsOf(options: Parameters<typeof build>[0]): Promise<string[]> {
  const result = await build({
    ...options,
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
  });
  return Object.keys((result.metafile as Metafile).inputs).map((input) => join(PROJECT_ROOT, input));
}

/**
 * Every third-party package that ships, with its licence: what esbuild bundles into each function
 * of `lib/functions.ts` with the deployed options (`sharedBundling`), what the app's entry bundles
 * (the same modules Vite resolves), and the externals the runtime provides (their installed copies).
 */
export async function shippedPackages(): Promise<ShippedPackage[]> {
  const found = new Map<string, ShippedPackage>();
  const note = (file: string, where: string) => {
    const pkg = packageOf(file);
    if (!pkg) return;
    const key = `${pkg.name}@${pkg.version}`;
    const entry = found.get(key) ?? { name: pkg.name, version: pkg.version, licence: pkg.licence, shippedIn: [] };
    if (!entry.shippedIn.includes(where)) entry.shippedIn.push(where);
    found.set(key, entry);
  };
  const options = lambdaBuildOptions();
  const externals = new Set<string>();
  for (const [name, spec] of Object.entries(FUNCTIONS)) {
    // A function that reads or writes the visit table also ships the DuckDB chunk beside its entry.
    const entries = [spec.entry, ...('visitTable' in spec ? [DUCKDB_CHUNK.entry] : [])];
    const result = await build({
      ...options,
      entryPoints: entries.map((entry) => join(PROJECT_ROOT, entry)),
      outdir: join(PROJECT_ROOT, '.cache', 'licences'),
      write: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: PROJECT_ROOT,
    });
    const meta = result.metafile as Metafile;
    for (const input of Object.keys(meta.inputs)) note(join(PROJECT_ROOT, input), name);
    for (const input of Object.values(meta.inputs))
      for (const imported of input.imports) if (imported.external) externals.add(imported.path);
  }
  for (const file of await inputsOf({
    entryPoints: [join(PROJECT_ROOT, 'app/src/main.tsx')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'empty', '.svg': 'empty', '.png': 'empty' },
  }))
    note(file, 'app');
  for (const specifier of externals) {
    if (specifier.startsWith('node:')) continue;
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
    const path = join(PROJECT_ROOT, 'node_modules', name, 'package.json');
    if (existsSync(path)) note(path, 'runtime');
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `node bin/run-ts.js scripts/licences.ts`: the table of shipped packages; exit 1 when one is GNU-only or unknown. */
async function main(): Promise<void> {
  const packages = await shippedPackages();
  for (const p of packages) console.log(`${p.name}@${p.version}\t${p.licence}\t${p.shippedIn.sort().join(',')}`);
  const bad = packages.filter((p) => p.licence === 'UNKNOWN' || onlyCopyleft(p.licence));
  console.log(`${packages.length} packages; ${bad.length} refused`);
  if (bad.length > 0) {
    for (const p of bad) console.error(`refused: ${p.name}@${p.version} (${p.licence})`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && relative(process.argv[1], new URL(import.meta.url).pathname) === '') await main();
