import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { SharedScans, type SharedTables } from '../../local/shared-scans.js';

/**
 * `SharedScans` past DuckDB's bounds: when making a load's tables runs out of memory and of spill room
 * (DuckDB's "Out of Memory Error"), the load's requests run with no tables (each scans alone) and nothing
 * is left behind; any other error is the requests' error. A stand-in connection records the statements.
 */
function connection(failure: Error | null) {
  const statements: string[] = [];
  const db = {
    run: async (sql: string) => {
      statements.push(sql);
      if (failure && sql.startsWith('CREATE TEMP TABLE shared_p_')) throw failure;
    },
  };
  return { statements, scans: new SharedScans(async () => db as unknown as DuckDBConnection) };
}

const source = { visits: 'SELECT 1 AS v', payments: 'SELECT 1 AS p' };

describe('shared scans past DuckDB’s bounds', () => {
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
