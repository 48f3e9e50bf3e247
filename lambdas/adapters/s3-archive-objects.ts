import { GetObjectCommand, paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { domainSchema } from '../domain/site.js';
import type { ArchiveObject, ArchiveObjects } from '../ports.js';
import type { S3ArchiveLocation } from './s3-archive-eraser.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** An archive object's key under the prefix: a site's partition day and a file name, nothing that climbs out. */
const OBJECT_KEY = /^site=[a-z0-9.-]+\/dt=(\d{4}-\d{2}-\d{2})\/[^/]+$/;

/**
 * The partition day of an archive object's key (`site=<d>/dt=<day>/<name>`), or null for another key.
 */
export const dtOfKey = (key: string): string | null => OBJECT_KEY.exec(key)?.[1] ?? null;

/**
 * Checks a span of UTC partition days before it goes into a request.
 * @throws Error when a day is not `YYYY-MM-DD`
 */
export function checkDays(fromDt: string, toDt: string): void {
  if (!DAY.test(fromDt) || !DAY.test(toDt)) throw new Error(`bad partition days ${fromDt}..${toDt}`);
}

/**
 * The deployed archive's objects (`ArchiveObjects`): a span of a site's partitions listed with one
 * ListObjectsV2 under `<prefix>site=<domain>/`, starting after `dt=<fromDt>` (1,000 keys a page, so
 * a few days of 15-minute Firehose objects is one request), stopped past `dt=<toDt>`; an object
 * read with GetObject. Grants: `s3:ListBucket` with that `s3:prefix` and `s3:GetObject` on the
 * archive's objects (the operations function has both for Athena's reads and erasures, lib/archive.ts).
 */
export class S3ArchiveObjects implements ArchiveObjects {
  constructor(
    private readonly s3: S3Client,
    private readonly location: S3ArchiveLocation,
  ) {}

  /**
   * @throws ZodError when `site` is not a domain name; Error for bad days
   * @throws S3ServiceException when the listing fails
   */
  async list(site: string, fromDt: string, toDt: string): Promise<ArchiveObject[]> {
    checkDays(fromDt, toDt);
    const { bucket, prefix } = this.location;
    const Prefix = `${prefix}site=${domainSchema.parse(site)}/`;
    const found: ArchiveObject[] = [];
    const pages = paginateListObjectsV2(
      { client: this.s3 },
      { Bucket: bucket, Prefix, StartAfter: `${Prefix}dt=${fromDt}` },
    );
    for await (const page of pages) {
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(prefix.length) ?? '';
        const dt = dtOfKey(key);
        // Keys come in order: past the last day, nothing more of the span follows.
        if (dt !== null && dt > toDt) return found;
        if (dt !== null && object.ETag) found.push({ key, etag: object.ETag, bytes: object.Size ?? 0 });
      }
    }
    return found;
  }

  /** @throws Error when `key` is not an archive object's key; S3ServiceException when the read fails */
  async get(key: string): Promise<{ body: Uint8Array; etag: string }> {
    if (dtOfKey(key) === null) throw new Error(`not an archive object: ${key}`);
    const Key = `${this.location.prefix}${key}`;
    const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.location.bucket, Key }));
    const body = await answer.Body?.transformToByteArray();
    if (!body) throw new Error(`s3://${this.location.bucket}/${Key} has no body`);
    return { body, etag: answer.ETag ?? '' };
  }
}
