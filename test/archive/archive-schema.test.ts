import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ARCHIVE_PARTITION_KEYS,
  archiveDt,
  archiveTableColumns,
  duckdbColumnType,
  glueColumns,
} from '../../lambdas/domain/archive-schema.js';
import { TRACKED_EVENT_COLUMNS, trackedEventSchema } from '../../lambdas/domain/tracked-event.js';
import { NAMED_QUERIES } from '../../sql/named-queries.js';

const docs = readFileSync(fileURLToPath(new URL('../../docs/sql.md', import.meta.url)), 'utf8');

describe('archive schema, derived from TRACKED_EVENT_COLUMNS', () => {
  it.each([
    [Date.UTC(2026, 0, 14, 23, 59, 59, 999), '2026-01-14'],
    [Date.UTC(2026, 0, 15, 0, 0, 0, 0), '2026-01-15'],
    [Date.UTC(2024, 1, 29, 12), '2024-02-29'],
    [0, '1970-01-01'],
    [Date.UTC(9999, 11, 31, 23, 59, 59, 999), '9999-12-31'],
  ])('archiveDt(%i) is the UTC date %s', (ts, dt) => {
    expect(archiveDt(ts)).toBe(dt);
  });

  it.each([-1, 1.5, Number.NaN, Date.UTC(10000, 0, 1), Number.MAX_SAFE_INTEGER])(
    'archiveDt(%d) throws a RangeError',
    (ts) => {
      expect(() => archiveDt(ts)).toThrow(RangeError);
    },
  );

  it('maps every column type to DuckDB', () => {
    expect(['string', 'int', 'bigint', 'timestamp'].map((t) => duckdbColumnType(t as never))).toEqual([
      'VARCHAR',
      'INTEGER',
      'BIGINT',
      'TIMESTAMP',
    ]);
  });

  it('gives the Glue table the schema columns in order, with Glue types, and the partitions apart', () => {
    expect(glueColumns()).toEqual(TRACKED_EVENT_COLUMNS.map((c) => ({ name: c.name, type: c.type })));
    expect(glueColumns().every((c) => ['string', 'int', 'bigint', 'timestamp'].includes(c.type))).toBe(true);
    expect(ARCHIVE_PARTITION_KEYS).toEqual([
      { name: 'site', type: 'string' },
      { name: 'dt', type: 'string' },
    ]);
    expect(archiveTableColumns().map((c) => c.name)).toEqual([
      ...TRACKED_EVENT_COLUMNS.map((c) => c.name),
      'site',
      'dt',
    ]);
  });

  it('archives every field of a tracked event: each is a column or the site partition', () => {
    const names = new Set(archiveTableColumns().map((c) => c.name));
    expect(Object.keys(trackedEventSchema.shape).filter((k) => !names.has(k))).toEqual([]);
    expect(new Set(TRACKED_EVENT_COLUMNS.map((c) => c.name)).size).toBe(TRACKED_EVENT_COLUMNS.length);
    expect(TRACKED_EVENT_COLUMNS.some((c) => c.name === 'site')).toBe(false);
  });
});

describe('docs/sql.md', () => {
  it.each(TRACKED_EVENT_COLUMNS.map((c) => [c.name, c.type] as const))('documents column %s (%s)', (name, type) => {
    expect(docs).toContain(`| \`${name}\` | ${type} | ${duckdbColumnType(type)} |`);
  });

  it.each(ARCHIVE_PARTITION_KEYS.map((k) => [k.name, k.type] as const))('documents partition %s', (name, type) => {
    expect(docs).toContain(`| \`${name}\` | ${type} (partition) | ${duckdbColumnType(type)} |`);
  });

  it('documents no column the schema does not have', () => {
    const documented = [...docs.matchAll(/^\| `([a-z_]+)` \| [a-z]+/gm)].map((m) => m[1]);
    expect(documented).toEqual(archiveTableColumns().map((c) => c.name));
  });

  it.each(NAMED_QUERIES.map((q) => [q.name, q] as const))('shows named query %s with its SQL', (name, query) => {
    expect(docs).toContain(`### \`${name}\`\n\n${query.description}\n\n\`\`\`sql\n${query.sql}\n\`\`\``);
  });
});
