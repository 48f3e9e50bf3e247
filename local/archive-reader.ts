import { archiveTableColumns, trackedEventFromRow } from '../lambdas/domain/archive-schema.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { ArchiveReader } from '../lambdas/ports.js';
import { runSql, runSqlPages, sqlIdentifier, sqlLiteral } from './sql.js';

/** Rows per page of a local archive read. */
const PAGE = 20_000;

/** The local archive through DuckDB (the stand-in for Athena in `rebuild`). */
export class DuckDbArchiveReader implements ArchiveReader {
  constructor(private readonly archiveDir: string) {}

  async events(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<TrackedEvent[]>> {
    const where = `site = ${sqlLiteral(site)} AND dt BETWEEN ${sqlLiteral(fromDt)} AND ${sqlLiteral(toDt)}`;
    const columns = archiveTableColumns()
      .map((c) => sqlIdentifier(c.name))
      .join(', ');
    // One query, whole before the pages: a broken archive is known before the rebuild changes anything.
    const result = await runSqlPages(
      this.archiveDir,
      `SELECT ${columns} FROM events WHERE ${where} ORDER BY ts, event_id`,
      PAGE,
    );
    return (async function* pages() {
      for await (const rows of result.pages) yield rows.map((row) => trackedEventFromRow(result.columns, row));
    })();
  }

  async firstDay(site: string): Promise<string | null> {
    // Not min(dt): DuckDB 1.x answers an aggregate over a hive partition column from row-group
    // statistics and fails on some archives ("Attempted to access index 26 within vector of size 26").
    const { rows } = await runSql(
      this.archiveDir,
      `SELECT dt FROM events WHERE site = ${sqlLiteral(site)} ORDER BY dt LIMIT 1`,
    );
    const day = rows[0]?.[0];
    return day === null || day === undefined ? null : String(day);
  }

  async visitors(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<string[]>> {
    const where = `site = ${sqlLiteral(site)} AND dt BETWEEN ${sqlLiteral(fromDt)} AND ${sqlLiteral(toDt)}`;
    const archiveDir = this.archiveDir;
    await runSql(archiveDir, `SELECT count(*) FROM events WHERE ${where}`);
    return (async function* pages() {
      for (let offset = 0; ; offset += PAGE) {
        const result = await runSql(
          archiveDir,
          `SELECT DISTINCT visitor_id FROM events WHERE ${where} ORDER BY visitor_id LIMIT ${PAGE} OFFSET ${offset}`,
        );
        if (result.rows.length > 0) yield result.rows.map((row) => String(row[0]));
        if (result.rows.length < PAGE) return;
      }
    })();
  }
}
