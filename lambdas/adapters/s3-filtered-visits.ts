import { eachDay } from '../domain/range.js';
import { FILTERED_VISITS_METHODS, type FilteredRange, type FilteredVisits } from '../ports.js';
import { forwardPort } from '../forward-port.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { dictionaryFilePath, monthFilePath, openFilePath, paymentsFilePath } from '../../local/visit-table.js';
import type { S3TableFiles } from './s3-table-files.js';

/** The months (`YYYY-MM`) of a site-local day span. */
const monthsOf = (from: string, to: string) => [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))];

/**
 * Filtered reads of the visit and payments tables in S3 (`FilteredVisits`, `docs/data-model.md`
 * "Filtered reports"): the files a query reads (the dictionary, the open days, the range's payment
 * and visit months) are fetched
 * into `/tmp` (`S3TableFiles`: a listing per site at most every `listTtlMs`, a GetObject only for a
 * file whose ETag changed, so a warm instance reads S3 once per new version), then the local twin's
 * engine (`LocalFilteredVisits`, DuckDB) runs its SQL on them unchanged. DuckDB's `httpfs` is not
 * used: it is an extension DuckDB downloads at first load, which a Lambda without egress cannot.
 */
export type S3FilteredVisits = FilteredVisits & {
  /** Closes DuckDB. */
  close(): Promise<void>;
};

/**
 * The filtered engine over `files` (`S3FilteredVisits`): each method of the port fetches the
 * range's files, runs the local engine's query, and releases them.
 * @throws (from each method) S3ServiceException when S3 fails; Error with the engine's message
 */
export function filteredVisitsInS3(files: S3TableFiles): S3FilteredVisits {
  // An instance serves one request at a time: a load's panels never meet there, so nothing is shared.
  const engine = new LocalFilteredVisits(files.root, null);
  const root = files.root;

  /**
   * Runs `query` once the range's files are local, holding them until it ends.
   * @throws S3ServiceException when S3 fails; Error with the engine's message
   */
  const over = async <T>(site: string, range: FilteredRange, query: () => Promise<T>): Promise<T> => {
    // A payment carries its credited visit's columns: the range's own months are all a query reads.
    const paths = [
      dictionaryFilePath(root, site),
      openFilePath(root, site),
      ...monthsOf(range.from, range.to).flatMap((m) => [paymentsFilePath(root, site, m), monthFilePath(root, site, m)]),
    ];
    await files.fetch(site, paths);
    try {
      return await query();
    } finally {
      await files.release(paths);
    }
  };

  return {
    ...forwardPort(
      FILTERED_VISITS_METHODS,
      () => engine,
      (_method, [site, , range], call) => over(site, range, call),
    ),
    close: () => engine.close(),
  };
}
