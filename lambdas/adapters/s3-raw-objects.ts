import { GetObjectCommand, NoSuchKey, S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import type { RawObjects } from '../ports.js';

/** Key prefix of the ingest delivery's objects: `raw/<UTC yyyy/MM/dd/HH>/<stream>-…` (`lib/ingest.ts`). */
export const RAW_PREFIX = 'raw/';
const HOUR_MS = 3_600_000;
const pad = (n: number) => String(n).padStart(2, '0');

/** The prefix of the objects Firehose delivered in the UTC hour holding `ms`, as its `!{timestamp:yyyy/MM/dd/HH}` writes it. */
export function rawHourPrefix(ms: number): string {
  const d = new Date(ms);
  return `${RAW_PREFIX}${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCHours())}/`;
}

/**
 * The ingest delivery's objects on S3 (`s3:GetObject` on `raw/*`, `s3:ListBucket` for the sweep).
 * `listSince` lists the hour prefixes from `sinceMs` to now (ListObjectsV2, 1,000 keys a page)
 * and keeps the objects modified at or after it.
 */
export class S3RawObjects implements RawObjects {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async get(key: string): Promise<Buffer | null> {
    try {
      const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Body ? Buffer.from(await Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
  }

  async listSince(sinceMs: number): Promise<string[]> {
    const keys: string[] = [];
    const now = this.clock();
    for (let hour = Math.floor(sinceMs / HOUR_MS) * HOUR_MS; hour <= now; hour += HOUR_MS) {
      const pages = paginateListObjectsV2({ client: this.s3 }, { Bucket: this.bucket, Prefix: rawHourPrefix(hour) });
      for await (const page of pages)
        for (const o of page.Contents ?? [])
          if (o.Key && o.LastModified && o.LastModified.getTime() >= sinceMs) keys.push(o.Key);
    }
    return keys;
  }
}
