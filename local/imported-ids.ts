import { readLocalStream } from '../lambdas/adapters/local-stream.js';
import { isImportedEventId } from '../lambdas/domain/import-line.js';
import { SESSIONIZER, archiveDeliveryDir } from './consumers.js';
import { LocalStreamPoller } from './stream-poller.js';
import { LocalArchiveDeliveryPoller } from './archive-delivery.js';
import { runSql, sqlLiteral } from './sql.js';

/** Stream records read per step of the tail scan. */
const TAIL_PAGE = 10_000;

/**
 * The ids of imported events (`importedEventId`) a site already has locally:
 * those in the Parquet archive, those the archive's delivery holds unconverted,
 * and those on the stream past the sessionizer's checkpoint (written, not
 * forwarded to the archive yet — by a running server's import or this data
 * directory's last one). The checkpoint is read first, the delivery next and
 * the archive last, so a batch moving on in between is seen in one place or
 * two, never in none.
 *
 * Reads only ids of the imported shape (UUID version 8), so live traffic costs
 * one column scan and no memory.
 */
export async function localImportedIds(paths: { stream: string; archive: string }, site: string): Promise<Set<string>> {
  const from = await new LocalStreamPoller(paths.stream, SESSIONIZER, async () => null).checkpoint();
  const ids = new Set<string>();
  const add = (data: Buffer) => {
    try {
      const event = JSON.parse(data.toString('utf8')) as { event_id?: unknown; site?: unknown };
      if (event.site === site && typeof event.event_id === 'string' && isImportedEventId(event.event_id))
        ids.add(event.event_id);
    } catch {
      // A record that is not JSON is no event: the consumers skip it too.
    }
  };
  const delivery = new LocalArchiveDeliveryPoller(archiveDeliveryDir(paths.stream), async () => null);
  for (const file of await delivery.pending()) {
    // Converted and deleted since it was listed: then it is in the archive, read below.
    const records = await delivery.read(file).catch(() => []);
    for (const record of records) add(record.data);
  }
  const archived = await runSql(
    paths.archive,
    `SELECT DISTINCT event_id FROM events WHERE site = ${sqlLiteral(site)} AND substr(event_id, 15, 1) = '8'`,
  );
  for (const [id] of archived.rows) if (typeof id === 'string' && isImportedEventId(id)) ids.add(id);
  for (let offset = from; ;) {
    const { records, nextOffset } = await readLocalStream(paths.stream, offset, TAIL_PAGE);
    for (const record of records) add(record.data);
    if (records.length === 0) return ids;
    offset = nextOffset;
  }
}
