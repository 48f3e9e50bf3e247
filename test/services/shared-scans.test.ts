import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { SharedScans, type SharedTables } from '../../local/shared-scans.js';

/**
 * `SharedScans` at its bounds: a range whose files hold more rows than its bound gets no tables, and when
 * making them runs out of room (DuckDB's "Out of Memory Error") the load's requests run with none (each scans
 * alone) and nothing is left behind; any other error is the requests' error. A stand-in connection records
 * the statements.
 */
function connection(failure: Error | null, maxRows = 10) {
  const statements: string[] = [];
  const db = {
    run: async (sql: string) => {
      statements.push(sql);
      if (failure && sql.startsWith('CREATE TEMP TABLE shared_p_')) throw failure;
    },
    // The range's rows (`source.rows`).
    runAndReadAll: async () => ({ getRowsJS: () => [[10]] }),
  };
  return { statements, scans: new SharedScans(async () => db as unknown as DuckDBConnection, maxRows) };
}

const source = { rows: 'SELECT 10', visits: 'SELECT 1 AS v', payments: 'SELECT 1 AS p' };

describe('shared scans at their bounds', () => {
  it('runs a load’s requests with no tables when making them runs out of memory, and drops what was made', async () => {
    const { statements, scans } = connection(
      new Error('Out of Memory Error: failed to offload data block: could not write to the temporary directory'),
    );
    const seen: Array<SharedTables | null> = [];
    const answers = await Promise.all(
      [1, 2, 3].map((n) =>
        scans.with('key', source, async (tables) => {
          seen.push(tables);
          return n;
        }),
      ),
    );
    expect(answers).toEqual([1, 2, 3]);
    expect(seen).toEqual([null, null, null]);
    // Made once for the three, the half made dropped.
    expect(statements.filter((s) => s.startsWith('CREATE TEMP TABLE shared_v_'))).toHaveLength(1);
    expect(statements.at(-1)).toBe('DROP TABLE IF EXISTS shared_v_1; DROP TABLE IF EXISTS shared_p_1');
  });

  it('makes no tables for a range whose files hold more rows than its bound', async () => {
    const { statements, scans } = connection(null, 9);
    expect(await Promise.all([1, 2].map(() => scans.with('key', source, async (tables) => tables)))).toEqual([
      null,
      null,
    ]);
    expect(statements).toEqual([]);
  });

  it('fails the requests with any other error of making the tables', async () => {
    const { scans } = connection(new Error('IO Error: No files found that match the pattern'));
    await expect(scans.with('key', source, async () => 1)).rejects.toThrow('IO Error');
  });

  it('shares the tables made for requests that run at once and drops them after the last', async () => {
    const { statements, scans } = connection(null);
    const seen = await Promise.all([1, 2].map(() => scans.with('key', source, async (tables) => tables)));
    expect(seen).toEqual([
      { v: 'shared_v_1', p: 'shared_p_1' },
      { v: 'shared_v_1', p: 'shared_p_1' },
    ]);
    expect(statements).toEqual([
      'CREATE TEMP TABLE shared_v_1 AS SELECT 1 AS v',
      'CREATE TEMP TABLE shared_p_1 AS SELECT 1 AS p',
      'DROP TABLE IF EXISTS shared_v_1; DROP TABLE IF EXISTS shared_p_1',
    ]);
  });
});
