import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { addDays } from '../domain/range.js';
import { domainSchema } from '../domain/site.js';
import type { ArchiveObject, ArchiveObjects, ArchiveSnapshot, RecentArchive } from '../ports.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { dtOfKey } from './s3-archive-objects.js';

/** GetObject requests in flight at once when a cold instance copies a span's objects. */
const PARALLEL_GETS = 16;
/**
 * Partition days before a snapshot's first whose copies are kept: the open days' span starts a day
 * or two after the day that closes next, whose span (`archiveSpan`) starts two days before it.
 */
const KEEP_DAYS_BEFORE = 2;

/** A copied object: the ETag of the version copied, its partition day, its file. */
interface Copy {
  etag: string;
  dt: string;
  file: string;
}

/**
 * Digest of a listing (`ArchiveSnapshot.digest`): SHA-256 of its keys and ETags in key order.
 */
export function listingDigest(listed: readonly ArchiveObject[]): string {
  const hash = createHash('sha256');
  for (const o of [...listed].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))
    hash.update(o.key).update('\n').update(o.etag).update('\n');
  return hash.digest('base64url');
}

/**
 * The archive's recent partitions read object by object (`RecentArchive`, `docs/data-model.md`
 * "Filtered reports"), instead of a query: a snapshot lists the span's objects (`ArchiveObjects`),
 * and its events come from local copies of them under `root` (`/tmp` in Lambda), each fetched only
 * when its ETag is not the copy's, read with the local archive's DuckDB reading
 * (`DuckDbArchiveReader`, the same SQL as `footfall sql` and the rebuild use locally) over the
 * copies laid out as the archive is (`<root>/<domain>/site=<domain>/dt=<day>/<digest of key>.parquet`).
 * A copy not listed any more in its span is removed, and copies of days more than
 * `KEEP_DAYS_BEFORE` before a span are dropped, so `/tmp` holds a few days of a site. A cold
 * instance (or a process) starts with none: the site's directory is cleared at its first use.
 * One caller at a time (the operations function's reserved concurrency is 1).
 */
export class ArchiveCopies implements RecentArchive {
  private readonly root: string;
  private readonly copies = new Map<string, Map<string, Copy>>();

  constructor(
    private readonly objects: ArchiveObjects,
    root: string,
  ) {
    this.root = resolve(root);
  }

  /** @throws Error when the site is not a domain name, or the listing fails */
  async snapshot(site: string, fromDt: string, toDt: string): Promise<ArchiveSnapshot> {
    const domain = domainSchema.parse(site);
    const listed = await this.objects.list(domain, fromDt, toDt);
    return {
      digest: listingDigest(listed),
      objects: listed.length,
      events: () => this.eventsOf(domain, fromDt, toDt, listed),
    };
  }

  private async eventsOf(site: string, fromDt: string, toDt: string, listed: readonly ArchiveObject[]) {
    const copies = await this.copiesOf(site);
    const keys = new Set(listed.map((o) => o.key));
    const keepFrom = addDays(fromDt, -KEEP_DAYS_BEFORE);
    for (const [key, copy] of copies) {
      const gone = copy.dt >= fromDt && copy.dt <= toDt && !keys.has(key);
      if (gone || copy.dt < keepFrom) {
        copies.delete(key);
        await rm(copy.file, { force: true });
      }
    }
    const missing = listed.filter((o) => copies.get(o.key)?.etag !== o.etag);
    for (let i = 0; i < missing.length; i += PARALLEL_GETS)
      await Promise.all(missing.slice(i, i + PARALLEL_GETS).map((o) => this.download(site, o, copies)));
    return new DuckDbArchiveReader(join(this.root, site)).events(site, fromDt, toDt);
  }

  /** The site's copies; at its first use, its directory emptied (files left by another process are unknown). */
  private async copiesOf(site: string): Promise<Map<string, Copy>> {
    let copies = this.copies.get(site);
    if (copies === undefined) {
      await rm(join(this.root, site), { recursive: true, force: true });
      copies = new Map();
      this.copies.set(site, copies);
    }
    return copies;
  }

  /** Copies one object: a temp file renamed over the copy, so DuckDB never reads half of one. */
  private async download(site: string, object: ArchiveObject, copies: Map<string, Copy>): Promise<void> {
    const dt = dtOfKey(object.key);
    if (dt === null) throw new Error(`not an archive object: ${object.key}`);
    const name = createHash('sha256').update(object.key).digest('hex').slice(0, 32);
    const file = join(this.root, site, `site=${site}`, `dt=${dt}`, `${name}.parquet`);
    const { body, etag } = await this.objects.get(object.key);
    await mkdir(dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.get`;
    await writeFile(temp, body);
    await rename(temp, file);
    copies.set(object.key, { etag: etag || object.etag, dt, file });
  }
}
