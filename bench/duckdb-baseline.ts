import { join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { addDays } from '../lambdas/domain/range.js';
import { sqlLiteral } from '../local/sql.js';

/**
 * The DuckDB baseline of the report bench (`docs/benchmarks.md`): the overview's visitors and sessions and the channel breakdown's
 * visits computed from the raw Parquet archive by DuckDB, as an analyst who knows the archive would
 * write it: one open connection; `read_parquet` of the site's files with hive partitioning and a
 * `WHERE` on `dt`, so DuckDB skips the files of other days (`dt` is the UTC date, so the local range
 * is widened by a day on each side, then filtered on the local date); visits sessionized in SQL
 * with the 30-minute gap (`lag` over each visitor's events), counted on the local day they start.
 */
export interface DuckBaseline {
  /** Runs the query; the answer and how long it took, ms. */
  run(from: string, to: string): Promise<{ ms: number; answer: DuckAnswer }>;
  close(): void;
}

/** What the baseline answers for a range of local days. */
export interface DuckAnswer {
  visitors: number;
  sessions: number;
  /** Channel → visits that started in the range. */
  channels: Record<string, number>;
}

/** Opens one DuckDB connection over `archiveDir` for `site` in `timezone` (IANA). */
export async function openDuckBaseline(archiveDir: string, site: string, timezone: string): Promise<DuckBaseline> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection: DuckDBConnection = await instance.connect();
  // Timestamps in the files are UTC instants; the session zone must not shift them.
  await connection.run(`SET TimeZone = 'UTC'`);
  const files = sqlLiteral(join(resolve(archiveDir), `site=${site}`, '*', '*.parquet'));
  return {
    async run(from, to) {
      const sql = `
        WITH e AS (
          SELECT visitor_id, channel, ts,
                 CAST(timezone(${sqlLiteral(timezone)}, ts::TIMESTAMPTZ) AS DATE) AS day
          FROM read_parquet(${files}, hive_partitioning = true)
          WHERE dt BETWEEN ${sqlLiteral(addDays(from, -1))} AND ${sqlLiteral(addDays(to, 1))}
        ),
        s AS (
          SELECT *, coalesce(ts - lag(ts) OVER (PARTITION BY visitor_id ORDER BY ts) >= INTERVAL 30 MINUTE, true) AS starts FROM e
        )
        SELECT channel, count(*) FILTER (WHERE starts) AS visits, count(DISTINCT visitor_id) AS visitors
        FROM s WHERE day BETWEEN DATE ${sqlLiteral(from)} AND DATE ${sqlLiteral(to)}
        GROUP BY GROUPING SETS ((channel), ())`;
      const t0 = process.hrtime.bigint();
      const reader = await connection.runAndReadAll(sql);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const answer: DuckAnswer = { visitors: 0, sessions: 0, channels: {} };
      for (const [channel, visits, visitors] of reader.getRowsJS() as Array<[string | null, bigint, bigint]>) {
        if (channel === null) {
          answer.visitors = Number(visitors);
          answer.sessions = Number(visits);
        } else answer.channels[channel] = Number(visits);
      }
      return { ms, answer };
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * Differences between Footfall's answer and DuckDB's: sessions and every channel's visits must be
 * equal; visitors within `visitorTolerance` (relative) when Footfall's count is a sketch estimate.
 * @returns one line per difference; empty when they agree
 */
export function compareAnswers(footfall: DuckAnswer, duck: DuckAnswer, visitorTolerance: number): string[] {
  const out: string[] = [];
  if (footfall.sessions !== duck.sessions) out.push(`sessions: Footfall ${footfall.sessions}, DuckDB ${duck.sessions}`);
  const error = Math.abs(footfall.visitors - duck.visitors) / Math.max(1, duck.visitors);
  if (error > visitorTolerance)
    out.push(
      `visitors: Footfall ${footfall.visitors}, DuckDB ${duck.visitors} (${(error * 100).toFixed(2)}% > ${(visitorTolerance * 100).toFixed(2)}%)`,
    );
  for (const channel of new Set([...Object.keys(footfall.channels), ...Object.keys(duck.channels)])) {
    const a = footfall.channels[channel] ?? 0;
    const b = duck.channels[channel] ?? 0;
    if (a !== b) out.push(`visits from ${channel}: Footfall ${a}, DuckDB ${b}`);
  }
  return out;
}
