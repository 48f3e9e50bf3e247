import { DeleteObjectsCommand, S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { domainSchema } from '../domain/site.js';
import type { ArchiveEraser } from '../ports.js';

/** Where the archive is in S3: the events bucket and the key prefix of the `site=/dt=` partitions. */
export interface S3ArchiveLocation {
  bucket: string;
  /** `events/` (`EVENTS_PREFIX`, lib/archive.ts). */
  prefix: string;
}

/**
 * The deployed archive's deletions: every object under
 * `<prefix>site=<domain>/` of the events bucket, listed (ListObjectsV2, 1,000
 * keys a page) and deleted 1,000 at a time (DeleteObjects' limit, S3 API
 * reference). The bucket is not versioned (lib/secure-bucket.ts), so a deleted
 * object is gone. The caller needs `s3:ListBucket` and `s3:DeleteObject` on it.
 */
export class S3ArchiveEraser implements ArchiveEraser {
  constructor(
    private readonly s3: S3Client,
    private readonly location: S3ArchiveLocation,
  ) {}

  /**
   * @throws ZodError when `site` is not a domain name
   * @throws Error when S3 reports a key it could not delete
   */
  async deleteSite(site: string): Promise<number> {
    const Prefix = `${this.location.prefix}site=${domainSchema.parse(site)}/`;
    let deleted = 0;
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.location.bucket, Prefix })) {
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) continue;
      const { Errors = [] } = await this.s3.send(
        new DeleteObjectsCommand({ Bucket: this.location.bucket, Delete: { Objects: keys, Quiet: true } }),
      );
      if (Errors.length > 0) throw new Error(`S3 did not delete ${Errors[0]?.Key}: ${Errors[0]?.Message}`);
      deleted += keys.length;
    }
    return deleted;
  }

  /**
   * Not built for S3 yet: rewriting the objects that hold a person's events
   * needs an Athena CTAS per partition (`docs/security.md`, "Erasing a
   * person"). Refused before anything changes, so no erasure is half done.
   * @throws Error always
   */
  async eraseVisitors(): Promise<{ files: number; events: number }> {
    throw new Error('erasing a person from the S3 archive is not supported yet; see docs/security.md');
  }
}
