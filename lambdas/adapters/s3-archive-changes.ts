import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { domainSchema } from '../domain/site.js';
import type { ArchiveChanges } from '../ports.js';
import type { S3ArchiveLocation } from './s3-archive-eraser.js';

/**
 * The deployed archive's changed partitions (`ArchiveChanges`, `docs/data-model.md` "Filtered
 * reports"): every object under `<prefix>site=<domain>/` listed (ListObjectsV2, 1,000 keys a page,
 * S3 API reference), and the `dt=` days of those whose `LastModified` is at or after the instant.
 * Firehose writes a new object per delivery and an erasure replaces objects whole (PutObject,
 * CopyObject), both setting `LastModified`, so a day changed since then holds such an object.
 * The caller needs `s3:ListBucket` with that prefix (the operations function's erasure grant,
 * lib/archive.ts).
 */
export class S3ArchiveChanges implements ArchiveChanges {
  constructor(
    private readonly s3: S3Client,
    private readonly location: S3ArchiveLocation,
  ) {}

  /**
   * @param sinceMs ms since epoch
   * @returns UTC partition days (`YYYY-MM-DD`), sorted, each once
   * @throws ZodError when `site` is not a domain name
   * @throws S3ServiceException when the listing fails
   */
  async changedDays(site: string, sinceMs: number): Promise<string[]> {
    const Prefix = `${this.location.prefix}site=${domainSchema.parse(site)}/`;
    const days = new Set<string>();
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.location.bucket, Prefix })) {
      for (const object of page.Contents ?? []) {
        const day = /^dt=(\d{4}-\d{2}-\d{2})\//.exec(object.Key?.slice(Prefix.length) ?? '')?.[1];
        if (day !== undefined && (object.LastModified?.getTime() ?? -Infinity) >= sinceMs) days.add(day);
      }
    }
    return [...days].sort();
  }
}
