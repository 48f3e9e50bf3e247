import { archiveTableColumns, trackedEventFromRow } from '../lambdas/domain/archive-schema.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { ArchiveReader } from '../lambdas/ports.js';
import { runSql, sqlIdentifier, sqlLiteral } from './sql.js';

/** Rows per page of a local archive read. */
const PAGE = 20_000;

/** The local archive through DuckDB (the stand-in for Athena in `rebuild`). */
export class DuckDbArchiveReader implements ArchiveReader {
  constructor(private readonly archiveDir: string) {}

  async events(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<TrackedEvent[]>> {
    const where = `site = ${sqlLiteral(site)} AND dt BETWEEN ${sqlLiteral(fromDt)} AND ${sqlLiteral(toDt)}`;
    // Reading the archive's files once up front surfaces a broken archive before the rebuild changes anything.
    await runSql(this.archiveDir, `SELECT count(*) FROM events WHERE ${where}`);
    const columns = archiveTableColumns().map((c) => sqlIdentifier(c.name)).join(', ');
    const archiveDir = this.archiveDir;
    return (async function* pages() {
      for (let offset = 0; ; offset += PAGE) {
        const result = await runSql(archiveDir, `SELECT ${columns} FROM events WHERE ${where} ORDER BY ts, event_id LIMIT ${PAGE} OFFSET ${offset}`);
        if (result.rows.length === 0) return;
        yield result.rows.map((row) => trackedEventFromRow(result.columns, row));
        if (result.rows.length < PAGE) return;
      }
    })();
  }
}
