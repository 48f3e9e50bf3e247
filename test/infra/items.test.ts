import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTIONS } from '../../lib/functions.js';
import {
  NAMESPACED,
  PARTITIONS,
  partitionOf,
  partitionPattern,
  type TableFunction,
} from '../../lambdas/adapters/dynamo/items.js';
import { namespacePartitions } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { functionConnection, UnknownPartitionError } from '../../local/iam/partition-guard.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const REGISTRY = 'lambdas/adapters/dynamo/items.ts';
const families = Object.values(PARTITIONS);

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'node_modules'
        ? []
        : sources(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Code without its comments (block and line), so prose may name partitions. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/**
 * A string or template literal that starts with a partition prefix of the registry: `'PAY#`,
 * `` `CUST#${…} ``, or a singleton partition's whole key (`'SITES'`).
 */
const prefixSpelling = new RegExp(
  `['"\`](?:${families
    .map((p) => (p.prefix.endsWith('#') ? p.prefix : `${p.prefix}['"\`]`).replace(/[$]/g, '\\$&'))
    .join('|')})`,
);

/** Every file of the code that ships or runs the twin, with the lines that spell a partition prefix. */
function prefixSpellings(files: readonly string[], read = (f: string) => readFileSync(join(root, f), 'utf8')) {
  return files.flatMap((file) =>
    code(read(file))
      .split('\n')
      .flatMap((line, i) => (prefixSpelling.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('the item registry (lambdas/adapters/dynamo/items.ts)', () => {
  it('no file outside the registry spells a partition key prefix', () => {
    const files = ['lambdas', 'local', 'lib', 'cli', 'scripts']
      .flatMap(sources)
      .filter((f) => relative('.', f) !== REGISTRY);
    expect(files.length).toBeGreaterThan(50);
    expect(prefixSpellings(files)).toEqual([]);
  });

  it('the scan sees a store that spells its own prefix', () => {
    const store = "const key = (site: string) => `CUST#${site}`;\nconst all = { pk: 'SITES' };\n// prose: PAY#";
    expect(prefixSpellings(['store.ts'], () => store)).toHaveLength(2);
  });

  it('docs/data-model.md has one row per item type, in the partition the registry gives it', () => {
    const doc = readFileSync(join(root, 'docs/data-model.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| ([A-Z_]+) \| `([^`]+)`/gm)].map((m) => [m[1]!, m[2]!] as const);
    const documented = new Map(rows);
    const registered = new Map(families.flatMap((p) => Object.keys(p.items).map((item) => [item, p.prefix] as const)));
    expect([...documented.keys()].sort()).toEqual([...registered.keys()].sort());
    for (const [item, pk] of documented) expect(pk.startsWith(registered.get(item)!), item).toBe(true);
  });

  it('every reader and writer is a function of the stack with the table', () => {
    const names = new Set(families.flatMap((p) => [...p.readers, ...p.writers]));
    for (const name of names) expect(FUNCTIONS[name as TableFunction], name).toHaveProperty('table');
  });

  it('every size bound and TTL is given', () => {
    for (const p of families)
      for (const [item, type] of Object.entries(p.items)) {
        expect(type.bound, item).toMatch(/[<≤]/);
        if ('ttlSeconds' in type) expect(type.ttlSeconds, item).toBeGreaterThan(0);
      }
  });

  it("rebuild deletes every namespaced family of a retired generation (the payment list's months aside)", () => {
    const pks = namespacePartitions('shop.test~g2');
    const listed = new Set(pks.map((pk) => partitionOf(pk)?.prefix));
    const missing = NAMESPACED.map((p) => p.prefix).filter(
      (prefix) => !listed.has(prefix) && prefix !== PARTITIONS.paymentList.prefix,
    );
    expect(missing.filter((prefix) => prefix !== PARTITIONS.paymentListRefunded.prefix)).toEqual([]);
    expect(pks.every((pk) => NAMESPACED.includes(partitionOf(pk)!))).toBe(true);
  });

  it('patterns: a family pattern matches its keys and no other family owns them', () => {
    for (const p of families) {
      const pk = p.prefix.endsWith('#') ? `${p.prefix}shop.test` : p.prefix;
      expect(partitionOf(pk), pk).toBe(p);
      expect(partitionPattern(p)).toBe(p.prefix.endsWith('#') ? `${p.prefix}*` : p.prefix);
    }
    expect(partitionOf('NOPE#x')).toBeUndefined();
    expect(partitionOf('SITESX')).toBeUndefined();
  });
});

describe("the local guard refuses a partition the registry doesn't know", () => {
  const sent: unknown[] = [];
  const conn = {
    table: 't',
    doc: { send: async (command: unknown) => sent.push(command) },
  } as unknown as DynamoConnection;

  it('a request on an unknown partition fails before it is sent, a known one goes through', async () => {
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const guarded = functionConnection(conn, 'app');
    await expect(guarded.doc.send(new GetCommand({ TableName: 't', Key: { pk: 'NOPE#x', sk: 's' } }))).rejects.toThrow(
      UnknownPartitionError,
    );
    expect(sent).toHaveLength(0);
    await guarded.doc.send(new GetCommand({ TableName: 't', Key: { pk: PARTITIONS.sites.key(), sk: 's' } }));
    expect(sent).toHaveLength(1);
  });
});
