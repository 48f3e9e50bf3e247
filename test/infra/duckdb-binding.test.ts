import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DUCKDB_BINDING, fetchedBinding, lockedIntegrity, type PackFetch } from '../../lib/duckdb-binding.js';

/** A tarball laid out as npm packs one (`package/…`), and its sha512 SRI string. */
function fakeTarball(dir: string): { file: string; integrity: string } {
  const pkg = join(dir, 'src', 'package');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: DUCKDB_BINDING, version: '9.9.9' }));
  writeFileSync(join(pkg, 'duckdb.node'), 'native');
  writeFileSync(join(pkg, 'libduckdb.so'), 'library');
  const file = join(dir, 'binding.tgz');
  execFileSync('tar', ['-czf', file, '-C', join(dir, 'src'), 'package']);
  return { file, integrity: `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}` };
}

/** A `PackFetch` that copies `file` and counts its calls. */
function packing(file: string) {
  const calls: string[] = [];
  const pack: PackFetch = (spec, destination) => {
    calls.push(spec);
    const target = join(destination, 'fetched.tgz');
    copyFileSync(file, target);
    return target;
  };
  return { pack, calls };
}

describe('DuckDB binding fetched at synth (deploys from another platform)', () => {
  it('unpacks the locked tarball once and reuses it at the next synth', () => {
    const dir = mkdtempSync(join(tmpdir(), 'binding-test-'));
    const { file, integrity } = fakeTarball(dir);
    const { pack, calls } = packing(file);
    const cacheDir = join(dir, 'cache');
    const first = fetchedBinding({ version: '9.9.9', integrity, cacheDir, pack });
    expect(first.from).toBe('fetched');
    expect(readdirSync(first.dir).sort()).toEqual(['duckdb.node', 'libduckdb.so', 'package.json']);
    expect(readFileSync(join(first.dir, 'libduckdb.so'), 'utf8')).toBe('library');
    const second = fetchedBinding({ version: '9.9.9', integrity, cacheDir, pack });
    expect(second.dir).toBe(first.dir);
    expect(calls).toEqual([`${DUCKDB_BINDING}@9.9.9`]);
  });

  it('refuses a tarball whose integrity is not the locked one, and unpacks nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'binding-test-'));
    const { file } = fakeTarball(dir);
    const { pack } = packing(file);
    const cacheDir = join(dir, 'cache');
    const locked = `sha512-${createHash('sha512').update('another tarball').digest('base64')}`;
    expect(() => fetchedBinding({ version: '9.9.9', integrity: locked, cacheDir, pack })).toThrow(/not the locked/);
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('a cached copy unpacked from another integrity is fetched again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'binding-test-'));
    const { file, integrity } = fakeTarball(dir);
    const { pack, calls } = packing(file);
    const cacheDir = join(dir, 'cache');
    fetchedBinding({ version: '9.9.9', integrity, cacheDir, pack });
    writeFileSync(join(cacheDir, '9.9.9', 'integrity'), 'sha512-stale');
    fetchedBinding({ version: '9.9.9', integrity, cacheDir, pack });
    expect(calls).toHaveLength(2);
  });

  it('the lock file records the integrity of the version @duckdb/node-bindings requires', () => {
    const require = createRequire(import.meta.url);
    const manifest = JSON.parse(readFileSync(require.resolve('@duckdb/node-bindings/package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    const version = manifest.optionalDependencies[DUCKDB_BINDING]!;
    expect(lockedIntegrity(join(import.meta.dirname, '../../package-lock.json'), version)).toMatch(/^sha512-/);
    expect(() => lockedIntegrity(join(import.meta.dirname, '../../package-lock.json'), '0.0.0')).toThrow(
      /records no integrity/,
    );
  });
});
