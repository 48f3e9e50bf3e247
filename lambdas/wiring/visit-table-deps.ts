import { S3Client } from '@aws-sdk/client-s3';
import { filteredVisitsInS3 } from '../adapters/s3-filtered-visits.js';
import { S3TableFiles, TABLE_FAMILIES, VISIT_TABLE_TMP_MIB } from '../adapters/s3-table-files.js';
import { S3VisitTable } from '../adapters/s3-visit-table.js';
import { ArchiveCopies } from '../adapters/archive-copies.js';
import { S3ArchiveObjects } from '../adapters/s3-archive-objects.js';
import type { S3ArchiveLocation } from '../adapters/s3-archive-eraser.js';
import type { FilteredVisits, RecentArchive, VisitTableStore } from '../ports.js';

/** Bytes of table files a warm instance keeps in `/tmp` between requests: its size less room for one more year. */
const CACHE_LIMIT_BYTES = (VISIT_TABLE_TMP_MIB - 512) * 1024 * 1024;
/**
 * How long a listing of a site's table files is trusted, ms: the writer rewrites them at most every
 * operations run (15 minutes), and a dashboard load's dozen requests within it list once.
 */
const LIST_TTL_MS = 60_000;

/** The table's files in the bucket, copied under `root` (for `access`: the report functions' families, or the writer's). */
function tableFiles(bucket: string, access: keyof typeof TABLE_FAMILIES, root: string, clock: () => number) {
  return new S3TableFiles(
    new S3Client({}),
    { bucket, families: TABLE_FAMILIES[access], listTtlMs: LIST_TTL_MS, limitBytes: CACHE_LIMIT_BYTES, clock },
    root,
  );
}

/** The report and MCP functions' filtered engine over the visit table in `bucket` (`S3FilteredVisits`). */
export function s3FilteredVisits(bucket: string, clock: () => number = Date.now): FilteredVisits {
  return filteredVisitsInS3(tableFiles(bucket, 'read', '/tmp/visit-table', clock));
}

/**
 * The operations function's reader of the archive's recent partitions at `location`, copied under `/tmp`
 * (`ArchiveCopies`), through the function's own client of the archive bucket.
 */
export function s3ArchiveCopies(s3: S3Client, location: S3ArchiveLocation): RecentArchive {
  return new ArchiveCopies(new S3ArchiveObjects(s3, location), '/tmp/archive-copies');
}

/** The operations function's writer of the visit table in `bucket` (`S3VisitTable`). */
export function s3VisitTable(bucket: string, clock: () => number = Date.now): VisitTableStore {
  return new S3VisitTable(tableFiles(bucket, 'write', '/tmp/visit-table-writer', clock));
}
