import type { AthenaClient } from '@aws-sdk/client-athena';
import { CopyObjectCommand, DeleteObjectsCommand, S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { glueColumns } from '../domain/archive-schema.js';
import { domainSchema } from '../domain/site.js';
import type { ArchiveEraser } from '../ports.js';
import { runAthenaQuery, type AthenaQueryOptions } from './athena-archive.js';

/** Where `eraseVisitors` has Athena write the rewritten files before they replace the originals: outside `events/`, so no query reads them. */
export const ERASURE_STAGING_PREFIX = 'erasure-staging/';

/** A SQL string literal (quotes doubled): visitor ids come from visitors and providers. */
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

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
    /** The stack's Athena workgroup and Glue database (`eraseVisitors` only). */
    private readonly athena?: { client: AthenaClient; options: AthenaQueryOptions & { table?: string } },
  ) {}

  /**
   * @throws ZodError when `site` is not a domain name
   * @throws Error when S3 reports a key it could not delete
   */
  async deleteSite(site: string): Promise<number> {
    const Prefix = `${this.location.prefix}site=${domainSchema.parse(site)}/`;
    let deleted = 0;
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.location.bucket, Prefix })) {
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
      await this.deleteKeys(keys);
      deleted += keys.length;
    }
    return deleted;
  }

  /**
   * Rewrites the archive's objects that hold an event of `visitors` without those events
   * (`docs/security.md`, "Erasing a person"), through Athena:
   *
   * 1. One query finds them: per object (`"$path"`) of the site's partitions, the person's events
   *    and all events (`count_if`, `count(*)`), scanning the site's `visitor_id` column.
   * 2. An object holding only the person's events is deleted.
   * 3. Any other is written again by `UNLOAD (SELECT <file columns> … WHERE "$path" = <object> AND
   *    the visitor is not theirs)` as Parquet (SNAPPY, as Firehose writes) under
   *    `ERASURE_STAGING_PREFIX`, then copied over the original key (S3 replaces an object whole,
   *    so a reader sees the old file or the new one; a second output file, if Athena splits one,
   *    is copied beside it first), and the staging objects deleted.
   *
   * Safe to repeat after a crash: a rewritten object no longer matches, and the staging prefix of
   * the site is emptied before each UNLOAD (Athena writes only to an empty location).
   * The caller needs Athena and Glue read on the table, `s3:GetObject`, `s3:ListBucket`,
   * `s3:PutObject` and `s3:DeleteObject` on the events bucket.
   * @throws ZodError when `site` is not a domain name
   * @throws Error without the Athena workgroup, or when Athena names an object outside the site's partitions
   * @throws AthenaQueryError when a query fails
   */
  async eraseVisitors(site: string, visitors: readonly string[]): Promise<{ files: number; events: number }> {
    const domain = domainSchema.parse(site);
    if (!this.athena) throw new Error('erasing from the S3 archive needs the Athena workgroup and Glue database');
    if (visitors.length === 0) return { files: 0, events: 0 };
    const { bucket, prefix } = this.location;
    const table = `"${this.athena.options.database}"."${this.athena.options.table ?? 'events'}"`;
    const theirs = `visitor_id IN (${visitors.map(literal).join(', ')})`;
    const partitions = `s3://${bucket}/${prefix}site=${domain}/`;
    const run = (sql: string) => runAthenaQuery(this.athena!.client, this.athena!.options, sql);

    const hits: Array<{ path: string; hit: number; total: number }> = [];
    for await (const { rows } of await run(
      `SELECT "$path", count_if(${theirs}), count(*) FROM ${table} WHERE site = ${literal(domain)} GROUP BY 1 HAVING count_if(${theirs}) > 0`,
    ))
      for (const [path, hit, total] of rows) hits.push({ path: path ?? '', hit: Number(hit), total: Number(total) });

    const columns = glueColumns()
      .map((c) => `"${c.name}"`)
      .join(', ');
    let events = 0;
    for (const { path, hit, total } of hits) {
      if (!path.startsWith(partitions)) throw new Error(`Athena named ${path}, outside ${partitions}`);
      const key = path.slice(`s3://${bucket}/`.length);
      events += hit;
      if (hit < total) {
        const staging = `${ERASURE_STAGING_PREFIX}site=${domain}/`;
        await this.deleteUnder(staging);
        const out = `${staging}${randomUUID()}/`;
        await run(
          `UNLOAD (SELECT ${columns} FROM ${table} WHERE site = ${literal(domain)} AND "$path" = ${literal(path)} AND (visitor_id IS NULL OR NOT ${theirs})) TO ${literal(`s3://${bucket}/${out}`)} WITH (format = 'PARQUET', compression = 'SNAPPY')`,
        );
        const written = await this.keysUnder(out);
        if (written.length === 0)
          throw new Error(`Athena wrote nothing for ${path}, which keeps ${total - hit} events`);
        // Extra outputs first: a crash before the original is replaced leaves it matching, and a rerun redoes it.
        for (const [i, from] of written.slice(1).entries()) await this.copy(from, `${key}.erased-${i + 1}`);
        await this.copy(written[0]!, key);
        await this.deleteKeys(written);
      } else await this.deleteKeys([key]);
    }
    return { files: hits.length, events };
  }

  private async copy(from: string, to: string): Promise<void> {
    const { bucket } = this.location;
    await this.s3.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: to,
        CopySource: `${bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
      }),
    );
  }

  private async keysUnder(Prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.s3 }, { Bucket: this.location.bucket, Prefix }))
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    return keys.sort();
  }

  private async deleteUnder(prefix: string): Promise<void> {
    await this.deleteKeys(await this.keysUnder(prefix));
  }

  /** DeleteObjects, 1,000 keys a request (its limit). @throws Error when S3 reports a key it could not delete */
  private async deleteKeys(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const { Errors = [] } = await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.location.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      if (Errors.length > 0) throw new Error(`S3 did not delete ${Errors[0]?.Key}: ${Errors[0]?.Message}`);
    }
  }
}
