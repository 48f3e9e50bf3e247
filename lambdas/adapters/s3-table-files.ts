import {
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { domainSchema } from '../domain/site.js';

/**
 * Where the visit and payments tables live in S3 (`docs/data-model.md`, "Filtered reports"): under
 * this prefix of the archive bucket, outside `events/`, so the Glue table of the events (whose
 * partition projection reads `events/site=/dt=` only, lib/archive.ts) never reads them.
 */
export const VISIT_TABLE_PREFIX = 'visit-table/';

/** The table's key families (`local/visit-table.ts` lays them out): the report functions read the first three, the writer all four. */
export const TABLE_FAMILIES = {
  read: ['visits', 'payments', 'dict'],
  write: ['visits', 'payments', 'dict', 'state'],
} as const;

/**
 * `/tmp` of the functions that hold the visit table (Lambda's ephemeral storage, MiB; lib/footfall-stack.ts sets
 * it): a year of the bench site's table is about 410 MiB (`docs/data-model.md`, "Filtered reports"), and DuckDB
 * spills nothing there (in-memory database).
 */
export const VISIT_TABLE_TMP_MIB = 2048;
/** An object of the table as listed: its ETag and size in bytes. */
interface Listed {
  etag: string;
  bytes: number;
}

/** A file of the local copy: the ETag of the object it was read from, its size, and when it was last used (ms). */
interface Copy extends Listed {
  used: number;
}

export interface S3TableFilesOptions {
  bucket: string;
  /** The key families of a site this instance lists and copies (`TABLE_FAMILIES`). */
  families: readonly string[];
  /** How long a site's listing is trusted before it is listed again, ms. */
  listTtlMs: number;
  /** Bytes of local copies kept once no read holds them (`/tmp` is bounded); least recently used go first. */
  limitBytes: number;
  clock: () => number;
}

/**
 * The visit table's files in S3 mirrored in a local directory, which DuckDB reads and writes as the
 * local twin does (`local/visit-table.ts`, `local/filtered-visits.ts`): a file's key is
 * `VISIT_TABLE_PREFIX` + its path under `root`. A site's objects are listed (ListObjectsV2 of each
 * family's `<family>/site=<domain>/`, 1,000 keys a page) at most once per `listTtlMs`; a file is
 * fetched (GetObject) only when the listed ETag differs from the copy's, and removed locally when
 * it is no longer listed. Copies outside the held ones are evicted, least recently used first,
 * above `limitBytes`.
 *
 * Grants: `s3:ListBucket` with `s3:prefix` under each family, `s3:GetObject` on its keys, and for
 * the writer `s3:PutObject` and `s3:DeleteObject` (lib/footfall-stack.ts, `visitTable`).
 */
export class S3TableFiles {
  readonly root: string;
  private readonly copies = new Map<string, Copy>();
  private readonly listings = new Map<string, { at: number; objects: Promise<Map<string, Listed>> }>();
  private readonly fetching = new Map<string, Promise<void>>();
  private readonly held = new Map<string, number>();

  /** @param root the local directory (created as needed; `/tmp/…` in Lambda) */
  constructor(
    private readonly s3: S3Client,
    private readonly options: S3TableFilesOptions,
    root: string,
  ) {
    this.root = resolve(root);
  }

  /** The file's path relative to `root`, with `/` (its key after `VISIT_TABLE_PREFIX`). */
  relativeOf(path: string): string {
    return relative(this.root, path).split(sep).join('/');
  }

  private key(rel: string): string {
    return `${VISIT_TABLE_PREFIX}${rel}`;
  }

  /**
   * The site's objects by relative path, listed at most once per `listTtlMs` (`fresh`: now).
   * @throws ZodError when `site` is not a domain name
   */
  private objects(site: string, fresh = false): Promise<Map<string, Listed>> {
    const domain = domainSchema.parse(site);
    const now = this.options.clock();
    const known = this.listings.get(domain);
    if (!fresh && known && now - known.at < this.options.listTtlMs) return known.objects;
    const objects = this.list(domain);
    this.listings.set(domain, { at: now, objects });
    // A failed listing is not kept: the next read lists again.
    objects.catch(() => this.listings.delete(domain));
    return objects;
  }

  private async list(domain: string): Promise<Map<string, Listed>> {
    const found = new Map<string, Listed>();
    for (const family of this.options.families) {
      const Prefix = this.key(`${family}/site=${domain}/`);
      for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.options.bucket, Prefix })) {
        for (const o of page.Contents ?? [])
          if (o.Key && o.ETag) found.set(o.Key.slice(VISIT_TABLE_PREFIX.length), { etag: o.ETag, bytes: o.Size ?? 0 });
      }
    }
    return found;
  }

  /** The relative paths of the site's listed objects under `under` (a relative prefix). */
  async listed(site: string, under: string): Promise<string[]> {
    return [...(await this.objects(site)).keys()].filter((rel) => rel.startsWith(under)).sort();
  }

  /**
   * Makes the local files of `paths` (absolute, under `root`) equal the site's listed objects: each
   * listed one fetched unless the copy has its ETag, each unlisted one removed. Holds them until
   * `release` (eviction leaves held files alone).
   * @throws S3ServiceException when a listing or a GetObject fails
   */
  async fetch(site: string, paths: readonly string[]): Promise<void> {
    const objects = await this.objects(site);
    const rels = [...new Set(paths.map((p) => this.relativeOf(p)))];
    for (const rel of rels) this.held.set(rel, (this.held.get(rel) ?? 0) + 1);
    try {
      await Promise.all(rels.map((rel) => this.fetchOne(rel, objects.get(rel))));
    } catch (error) {
      this.release(paths);
      throw error;
    }
  }

  private fetchOne(rel: string, listed: Listed | undefined): Promise<void> {
    const copy = this.copies.get(rel);
    if (listed === undefined) {
      if (copy === undefined) return Promise.resolve();
      this.copies.delete(rel);
      return rm(join(this.root, rel), { force: true });
    }
    if (copy?.etag === listed.etag) {
      copy.used = this.options.clock();
      return Promise.resolve();
    }
    // Concurrent reads of one version share one GetObject.
    const id = `${rel}\n${listed.etag}`;
    const running = this.fetching.get(id);
    if (running) return running;
    const done = this.download(rel, listed).finally(() => this.fetching.delete(id));
    this.fetching.set(id, done);
    return done;
  }

  private async download(rel: string, listed: Listed): Promise<void> {
    // A version newer than the listing is as good: its own ETag is kept.
    const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(rel) }));
    const body = await answer.Body?.transformToByteArray();
    if (!body) throw new Error(`s3://${this.options.bucket}/${this.key(rel)} has no body`);
    await this.install(rel, body);
    this.copies.set(rel, { etag: answer.ETag ?? listed.etag, bytes: body.byteLength, used: this.options.clock() });
  }

  /** Writes a file of the copy whole: a temp file renamed over it, so a reader sees the old file or the new one. */
  private async install(rel: string, body: Uint8Array): Promise<void> {
    const path = join(this.root, rel);
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.${process.pid}.get`;
    await writeFile(temp, body);
    await rename(temp, path);
  }

  /** Ends the hold `fetch` took on `paths`, then evicts copies above the limit. */
  release(paths: readonly string[]): Promise<void> {
    for (const rel of new Set(paths.map((p) => this.relativeOf(p)))) {
      const n = (this.held.get(rel) ?? 1) - 1;
      if (n > 0) this.held.set(rel, n);
      else this.held.delete(rel);
    }
    return this.evict();
  }

  private async evict(): Promise<void> {
    let total = [...this.copies.values()].reduce((sum, c) => sum + c.bytes, 0);
    const byAge = [...this.copies].filter(([rel]) => !this.held.has(rel)).sort(([, a], [, b]) => a.used - b.used);
    for (const [rel, copy] of byAge) {
      if (total <= this.options.limitBytes) break;
      this.copies.delete(rel);
      total -= copy.bytes;
      await rm(join(this.root, rel), { force: true });
    }
  }

  /**
   * Uploads the local file at `path` (under `root`) as its object (PutObject), and knows its new ETag.
   * @throws S3ServiceException when the put fails
   */
  async push(site: string, path: string): Promise<void> {
    const rel = this.relativeOf(path);
    const body = await readFile(path);
    const answer = await this.s3.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(rel), Body: body }),
    );
    const etag = answer.ETag ?? '';
    this.copies.set(rel, { etag, bytes: body.byteLength, used: this.options.clock() });
    (await this.objects(site)).set(rel, { etag, bytes: body.byteLength });
  }

  /**
   * Deletes every object of the site's families (listed afresh; DeleteObjects, 1,000 keys a request) and the
   * local copies under them.
   * @throws Error when S3 reports a key it could not delete
   */
  async removeSite(site: string): Promise<void> {
    const objects = await this.objects(site, true);
    const keys = [...objects.keys()];
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const answer = await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.options.bucket,
          Delete: { Objects: batch.map((rel) => ({ Key: this.key(rel) })), Quiet: true },
        }),
      );
      const failed = answer.Errors?.[0];
      if (failed) throw new Error(`could not delete s3://${this.options.bucket}/${failed.Key}: ${failed.Message}`);
    }
    objects.clear();
    for (const rel of [...this.copies.keys()])
      if (this.options.families.some((f) => rel.startsWith(`${f}/site=${site}/`))) this.copies.delete(rel);
  }
}
