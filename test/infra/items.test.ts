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

/** An item type as the tests see it: its shape and every builder, untyped. */
type Builder = (...parts: unknown[]) => string;
const itemTypes = families.flatMap((p) =>
  Object.entries(p.items).map(([name, t]) => {
    const type = t as { sk: string; key: Builder; forms?: Record<string, Builder>; range?: Record<string, Builder> };
    return { name, ...type, forms: type.forms ?? {}, range: type.range ?? {} };
  }),
);

/** The alternatives of an `sk` shape (`D#<YYYY-MM-DD>, M#<YYYY-MM>`): split at `, ` outside the placeholders. */
const alternatives = (shape: string) => shape.split(/, (?![^<]*>)/);

/** The fixed start of each shape alternative (`V#`, `SITE#`, `W#payments`, `STATE`): what only the registry spells. */
const skPrefixes = [
  ...new Set(
    itemTypes.flatMap((t) =>
      alternatives(t.sk).flatMap((a) => (/^[^<…]+/.exec(a)?.[0] ? [/^[^<…]+/.exec(a)![0]] : [])),
    ),
  ),
];
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Prefixes with a `#` (`V#`, `D#`, `LINK#`), and fixed text after a placeholder (`#rejected`): wrong in any literal. */
const hashed = skPrefixes.filter((p) => p.includes('#'));
const suffixes = [...new Set(itemTypes.flatMap((t) => [...t.sk.matchAll(/>(#[a-z]{4,})(?=$|,)/g)].map((m) => m[1]!)))];
/** Whole keys without a `#` (`STATE`, `SRC`, `KEY`): common words, so wrong only as a key's value. */
const words = skPrefixes.filter((p) => !p.includes('#'));

/**
 * What builds a sort key by hand: a string or template literal that starts with a registered sort key
 * prefix (`'V#'`, `` `SITE#${…}` ``), holds a registered suffix (`` `${provider}#rejected` ``), or is a range
 * bound (`#~`, `` `${to}~` ``); or a whole fixed key (`'STATE'`) given as a sort key (`[SK]:`, `sk:`,
 * `…_SK =`) or as a key condition value (`':from': 'SRC'`).
 */
const skSpellings = [
  new RegExp(`['"\`](?:${hashed.map(escape).join('|')})`),
  new RegExp(`(?:${suffixes.map(escape).join('|')})['"\`]`),
  /(?:#~|\}~)['"`]/,
  new RegExp(`(?:\\[SK\\]|\\bsk|_SK|Sk|':[a-z]+')\\s*[:=]\\s*['"\`](?:${words.map(escape).join('|')})['"\`]`),
];

function skSpellingsIn(files: readonly string[], read = (f: string) => readFileSync(join(root, f), 'utf8')) {
  return files.flatMap((file) =>
    code(read(file))
      .split('\n')
      .flatMap((line, i) => (skSpellings.some((r) => r.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

/** A shape alternative as a pattern: placeholders of dates and digit counts exactly, any other one as text. */
function shapePattern(alternative: string): RegExp {
  const placeholder = (inner: string) =>
    inner === 'YYYY-MM-DD'
      ? '\\d{4}-\\d{2}-\\d{2}'
      : inner === 'YYYY-MM'
        ? '\\d{4}-\\d{2}'
        : inner.endsWith('YYYY-MM-DDTHH')
          ? '\\d{4}-\\d{2}-\\d{2}T\\d{2}'
          : inner.endsWith('YYYY-MM-DDTHH:MM')
            ? '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}'
            : /, (\d+) digits$/.test(inner)
              ? `\\d{${/, (\d+) digits$/.exec(inner)![1]}}`
              : /^[A-Z](\|[A-Z])+$/.test(inner)
                ? `(?:${inner})`
                : '.+';
  const parts = alternative.split(/(<[^>]+>|…)/).filter((p) => p !== '');
  return new RegExp(
    `^${parts.map((p) => (p === '…' ? '.+' : p.startsWith('<') ? placeholder(p.slice(1, -1)) : escape(p))).join('')}$`,
  );
}

/**
 * Arguments for every sort key builder of the registry: `key` and each form build a key of the item type,
 * each range builder a prefix or bound that brackets one of them. A new item type or builder needs its row.
 */
const SAMPLES: Record<
  string,
  { key: unknown[]; forms?: Record<string, unknown[]>; range?: Record<string, unknown[]> }
> = {
  ACCOUNT: { key: [] },
  MEMBER: { key: ['ann@shop.test'], range: { all: [] } },
  ROLE_LOCK: { key: [] },
  SITE: { key: ['shop.test'], range: { all: [] } },
  PROVIDER: { key: ['stripe'] },
  SALT: { key: ['2026-11-27'] },
  VISIT: { key: [1_764_201_600_000, 'v-1'], range: { first: [], upTo: [1_764_201_600_000] } },
  VISIT_CHUNK: { key: [1_764_201_600_000, 'v-1', 2, 7], range: { of: ['V#1764201600000#v-1', 2] } },
  VISITOR_PAYMENT: { key: [1_764_201_600_000, 'stripe', 'pi_1#2'], range: { all: [] } },
  VISITOR_PAYMENTS: { key: [] },
  ROLLUP: {
    key: ['H', '2026-11-27T08', 0, 3],
    range: { granularity: ['H'], from: ['H', '2026-11-27T08'], to: ['H', '2026-11-27T08'] },
  },
  ROLLUP_COUNTS: {
    key: ['D', '2026-11-27', 0],
    range: { granularity: ['D'], from: ['D', '2026-11-26'], to: ['D', '2026-11-27'] },
  },
  ROLLUP_DELTA: {
    key: ['shardId-000000000001', '49590338271490256608559692538361571095921575989136588898', 3],
    range: { all: [] },
  },
  ROLLUP_LOG_STATE: { key: ['shardId-000000000001'] },
  IMPORTED: {
    key: ['M', '2026-11', 2],
    range: { granularity: ['M'], from: ['M', '2026-10'], to: ['M', '2026-11'] },
  },
  IMPORT_STATE: { key: [] },
  BATCH_MARKER: { key: [] },
  INGEST_CURSOR: { key: [] },
  INGEST_ENTRY: { key: [42], range: { last: [] } },
  INGEST_SEEN: { key: ['raw/2026/11/27/08/footfall-1-2026-11-27-08-00-00-abc'] },
  RECENT_PAYMENT_MARK: {
    key: [1_764_201_600_000.5, 'v-1'],
    forms: { reset: [1_764_201_600_000] },
    range: { from: [1_764_201_000_000] },
  },
  PAYMENT: { key: ['stripe', 'pi_1'] },
  PAYMENT_ALIAS: { key: ['cs_1'] },
  CUSTOMER: { key: ['stripe', 'cus_1'] },
  PAYMENT_ROLLUP: { key: ['stripe:pi_1'] },
  PAYMENT_LIST: {
    key: [false, '2026-11-27', 1_764_201_600_000, 'stripe:pi_1'],
    range: { from: [false, '2026-11-27'], to: [false, '2026-11-27'] },
  },
  PAYMENT_LIST_REFUNDED: {
    key: ['2026-11-27', 1_764_201_600_000, 'stripe:pi_1'],
    range: { from: ['2026-11-01'], to: ['2026-11-27'] },
  },
  PAYMENT_TOTALS: {
    key: ['M', '2026-11'],
    range: { granularity: ['M'], from: ['M', '2026-11'], to: ['M', '2026-11'] },
  },
  PAYMENT_CHANGE: { key: ['2026-11-27'] },
  PAYMENT_CUSTOMERS: {
    key: ['D', '2026-11-27'],
    range: { granularity: ['D'], from: ['D', '2026-11-27'], to: ['D', '2026-11-27'] },
  },
  PAYMENT_DIMENSION: {
    key: ['D#2026-11-27', 5],
    forms: { part: ['D#2026-11-27#5', 1_764_201_600, 2] },
    range: { granularity: ['D'], from: ['D', '2026-11-27'], to: ['D', '2026-11-27'], parts: ['D#2026-11-27#5'] },
  },
  PAYER_PAYMENT: { key: ['stripe:cus_1', 'stripe:pi_1'], range: { of: ['stripe:cus_1'] } },
  PAYER_STATE: { key: ['stripe:cus_1'] },
  COHORT_MEMBER: { key: ['2026-11-27', 'stripe:cus_1'], range: { day: ['2026-11-27'], month: ['2026-11'] } },
  COHORT: {
    key: ['M#2026-11', 'channels'],
    range: { granularity: ['M'], from: ['M', '2026-10'], to: ['M', '2026-11'] },
  },
  COHORT_CHANGE: { key: ['2026-11'] },
  COHORT_SOURCES: { key: [] },
  PAYMENT_PENDING: { key: ['stripe:pi_1'] },
  API_KEY: { key: [] },
  KEY_INFO: { key: ['key-1'] },
  LOOK: { key: ['shop.test'] },
  FX: { key: ['2026-11-27'] },
  USER: { key: [] },
  LINK: { key: ['9f86d081884c7d65'], range: { all: [] } },
  REALTIME: {
    key: ['2026-11-27T08:15', 'shardId-000000000001', '4959033827149', 0],
    range: { from: ['2026-11-27T08:10'] },
  },
  SESSION: { key: [] },
  INVITE: { key: [] },
  ATTEMPTS: { key: [1_764_201_600_000], range: { from: [1_764_200_640_000] } },
  EXPIRING: { key: [1_764_201_600, 'SESSION#9f86d081', 'SESSION'], range: { before: [1_764_201_601] } },
  REBUILD: { key: [], forms: { generation: [3] } },
  LAST_WEBHOOK: { key: ['paddle'] },
  REJECTED_WEBHOOKS: { key: ['paddle'] },
  IMPORT_JOB: { key: ['stripe'] },
  SITE_DELETION: { key: ['shop.test'] },
  ERASURE: { key: [1_764_201_600_000, '0b8f5a3c-8f1e-4c6e-9a57-2f1d3c4b5a69'] },
  ERASURE_REQUEST: {
    key: ['shop.test', 1_764_201_600_000, '0b8f5a3c-8f1e-4c6e-9a57-2f1d3c4b5a69'],
    range: { site: ['shop.test'] },
  },
  SHARE_LINK: { key: [] },
  SHARE_INFO: { key: ['shr_0123456789ab'] },
  SHARE_UNLOCK: { key: [] },
  EMAIL_RECIPIENTS: { key: [] },
  EMAIL_SENT: { key: ['weekly', '2026-W47', 'a1b2c3d4'] },
};
/** The sort keys an item type's `key` and forms build of their samples. */
const sampleKeys = (t: (typeof itemTypes)[number]) => [
  t.key(...SAMPLES[t.name]!.key),
  ...Object.entries(SAMPLES[t.name]!.forms ?? {}).map(([form, args]) => t.forms[form]!(...args)),
];
/** Range builders that give an upper bound (`<=`; `before`: `<`); `from` a lower one; any other one a prefix. */
const UPPER = new Set(['to', 'upTo', 'last', 'before']);

describe('sort keys: built by the registry, as the data model shapes them', () => {
  it('no file outside the registry spells a sort key prefix, suffix or range bound', () => {
    const files = ['lambdas', 'local', 'lib', 'cli', 'scripts', 'bench']
      .flatMap(sources)
      .filter((f) => relative('.', f) !== REGISTRY);
    expect(hashed).toEqual(expect.arrayContaining(['V#', 'D#', 'M#', 'SITE#', 'W#payments']));
    expect(words).toEqual(expect.arrayContaining(['STATE', 'SRC', 'INFLIGHT']));
    expect(skSpellingsIn(files)).toEqual([]);
  });

  it('the scan sees a store that spells a sort key by hand', () => {
    const store = [
      "const sk = (start: number, id: string) => `V#${String(start).padStart(13, '0')}#${id}`;",
      "Key: { [PK]: pk, [SK]: 'STATE' },",
      "ExpressionAttributeValues: { ':pk': pk, ':from': `${g}#${from}#`, ':to': `${g}#${to}#~` },",
      'const key = logKey(domain, `${provider}#rejected`);',
      "ExpressionAttributeValues: { ':pk': totalsPk(site), ':d': 'D#' },",
      "// prose: the visit's V# key, STATE",
      "const type = 'STATE';",
    ].join('\n');
    expect(skSpellingsIn(['store.ts'], () => store).map((l) => l.split(':')[1])).toEqual(['1', '2', '3', '4', '5']);
  });

  it('every builder of every item type has a sample below, and nothing else does', () => {
    const registered = itemTypes.map((t) => [t.name, Object.keys(t.forms).sort(), Object.keys(t.range).sort()]);
    const sampled = itemTypes.map((t) => [
      t.name,
      Object.keys(SAMPLES[t.name]?.forms ?? {}).sort(),
      Object.keys(SAMPLES[t.name]?.range ?? {}).sort(),
    ]);
    expect(sampled).toEqual(registered);
    expect(Object.keys(SAMPLES).sort()).toEqual(itemTypes.map((t) => t.name).sort());
  });

  it.each(itemTypes.map((t) => [t.name, t] as const))(
    '%s: its keys match its sk shape and its ranges cover them',
    (name, t) => {
      const sample = SAMPLES[name]!;
      const shapes = alternatives(t.sk).map(shapePattern);
      const keys = sampleKeys(t);
      for (const key of keys)
        expect(
          shapes.some((s) => s.test(key)),
          `${key} in ${t.sk}`,
        ).toBe(true);
      for (const [range, args] of Object.entries(sample.range ?? {})) {
        const bound = t.range[range]!(...args);
        const covers = (key: string) =>
          range === 'before'
            ? key < bound
            : UPPER.has(range)
              ? key <= bound
              : range === 'from'
                ? key >= bound
                : key.startsWith(bound);
        expect(keys.some(covers), `${name}.range.${range}: ${bound} and ${keys.join(', ')}`).toBe(true);
      }
    },
  );

  it('keys are the bytes the stores wrote before the registry built them (stored items stay readable)', () => {
    const { VISIT, VISIT_CHUNK } = PARTITIONS.visitor.items;
    const { ROLLUP, ROLLUP_COUNTS, ROLLUP_DELTA } = PARTITIONS.rollup.items;
    const { PAYMENT_DIMENSION } = PARTITIONS.paymentDimension.items;
    const pinned: Array<[string, string]> = [
      [VISIT.key(1_764_201_600_000, 'v'), 'V#1764201600000#v'],
      [VISIT.range.upTo(-5), 'V#0000000000000#~'],
      [VISIT_CHUNK.key(42, 'v', 3, 7), 'V#0000000000042#v#3#000007'],
      [ROLLUP.key('D', '2026-11-27', 4), 'D#2026-11-27#4'],
      [ROLLUP.key('D', '2026-11-27', 4, 2), 'D#2026-11-27#4#002'],
      [ROLLUP.range.to('M', '2026-11'), 'M#2026-11#~'],
      [ROLLUP_COUNTS.range.from('H', '2026-11-27T00'), 'C#H#2026-11-27T00#'],
      [ROLLUP_DELTA.key('s', '12', 3), `L#s#${'0'.repeat(127)}12#0003`],
      [PARTITIONS.ingest.items.INGEST_ENTRY.key(42), 'E#0000000000000042'],
      [PARTITIONS.recentPaymentMarks.items.RECENT_PAYMENT_MARK.forms.reset(12.7), '0000000000012#'],
      [
        PARTITIONS.paymentList.items.PAYMENT_LIST.key(true, '2026-11-27', 9, 'stripe:pi'),
        'A#2026-11-27#0000000000009#stripe:pi',
      ],
      [PARTITIONS.paymentTotals.items.PAYMENT_TOTALS.range.to('D', '2026-11-27'), 'D#2026-11-27~'],
      [PAYMENT_DIMENSION.forms.part(PAYMENT_DIMENSION.key('M#2026-11', 0), 17, 2), 'M#2026-11#0#0000000017#002'],
      [PARTITIONS.payer.items.PAYER_PAYMENT.key('stripe:c', 'stripe:pi'), '8:stripe:c#P#stripe:pi'],
      [PARTITIONS.expiring.items.EXPIRING.key(5, 'SESSION#h', 'SESSION'), '00000000005#SESSION#h#SESSION'],
      [PARTITIONS.rebuild.items.REBUILD.forms.generation(3), 'G#0000003'],
    ];
    for (const [built, stored] of pinned) expect(built).toBe(stored);
  });

  it("each item type's keys also match its row of docs/data-model.md (sk, or the Holds column for a part's key)", () => {
    const doc = readFileSync(join(root, 'docs/data-model.md'), 'utf8');
    for (const t of itemTypes) {
      const row = new RegExp(`^\\| ${t.name} \\|(.*)$`, 'm').exec(doc)?.[1]?.split(' | ');
      expect(row, t.name).toBeDefined();
      const documented = [row![1]!, row![2]!].flatMap((cell) =>
        [...cell.matchAll(/`([^`]+)`/g)].flatMap((m) => alternatives(m[1]!)).map(shapePattern),
      );
      for (const key of sampleKeys(t))
        expect(
          documented.some((s) => s.test(key)),
          `${t.name}: ${key}`,
        ).toBe(true);
    }
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
