import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Services and the domain reach storage only through ports (`lambdas/ports.ts`): no module under
 * `lambdas/services` or `lambdas/domain` imports one under `lambdas/adapters`, nor a wiring builder
 * (`lambdas/wiring`), which imports adapters. Composition happens in `lambdas/wiring`, used by the
 * Lambda entries and the local service alike.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const LAYERS = ['lambdas/services', 'lambdas/domain'];
const FORBIDDEN = ['lambdas/adapters/', 'lambdas/wiring/', 'lambdas/entry/'];
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : /\.ts$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
}

/** Repository paths (`.ts`) of the relative modules `file` imports or re-exports, type-only ones included. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((s) => relative(root, resolve(root, dirname(file), s)).replace(/\.js$/, '.ts'));
}

describe('ports: services and the domain import no adapter', () => {
  const files = LAYERS.flatMap(sources);

  it('finds the modules it checks', () => {
    expect(files).toContain('lambdas/services/payments.ts');
    expect(files).toContain('lambdas/domain/site.ts');
  });

  it('recognises an import of an adapter', () => {
    const seen = importsOf(
      'lambdas/services/x.ts',
      "import type {\n  A,\n} from '../adapters/dynamo/payment-store.js';\nexport { B } from '../wiring/payment-deps.js';",
    );
    expect(seen).toEqual(['lambdas/adapters/dynamo/payment-store.ts', 'lambdas/wiring/payment-deps.ts']);
  });

  it('no service or domain module imports an adapter, a wiring builder or an entry', () => {
    const offending = files.flatMap((file) =>
      importsOf(file, readFileSync(join(root, file), 'utf8'))
        .filter((target) => FORBIDDEN.some((prefix) => target.startsWith(prefix)))
        .map((target) => `${file} imports ${target}`),
    );
    expect(offending).toEqual([]);
  });
});
