import { existsSync } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { domainSchema } from '../lambdas/domain/site.js';
import type { ArchiveObject, ArchiveObjects } from '../lambdas/ports.js';
import { checkDays, dtOfKey } from '../lambdas/adapters/s3-archive-objects.js';

/**
 * The local archive's files as objects (`ArchiveObjects`, standing in for `S3ArchiveObjects`): the
 * Parquet files of `<archive>/site=<domain>/dt=<day>/`, each keyed by its path under the archive
 * (as S3 keys them under the events prefix), its ETag its size and modification time (a file
 * rewritten gets another, as an object put again does). Files being written end in `.tmp` and are
 * never listed.
 */
export class LocalArchiveObjects implements ArchiveObjects {
  private readonly root: string;

  /** @param root the archive's directory (`localPaths(dataDir).archive`); need not exist */
  constructor(root: string) {
    this.root = resolve(root);
  }

  /** @throws ZodError when `site` is not a domain name; Error for bad days */
  async list(site: string, fromDt: string, toDt: string): Promise<ArchiveObject[]> {
    checkDays(fromDt, toDt);
    const dir = `site=${domainSchema.parse(site)}`;
    if (!existsSync(join(this.root, dir))) return [];
    const found: ArchiveObject[] = [];
    for (const day of (await readdir(join(this.root, dir))).sort()) {
      const dt = /^dt=(\d{4}-\d{2}-\d{2})$/.exec(day)?.[1];
      if (dt === undefined || dt < fromDt || dt > toDt) continue;
      for (const name of (await readdir(join(this.root, dir, day))).sort()) {
        if (!name.endsWith('.parquet')) continue;
        const info = await stat(join(this.root, dir, day, name)).catch(() => null);
        if (info === null) continue;
        found.push({ key: `${dir}/${day}/${name}`, etag: `"${info.size}-${info.mtimeMs}"`, bytes: info.size });
      }
    }
    return found;
  }

  /** @throws Error when `key` is not an archive object's key, or the file cannot be read */
  async get(key: string): Promise<{ body: Uint8Array; etag: string }> {
    if (dtOfKey(key) === null) throw new Error(`not an archive object: ${key}`);
    const path = join(this.root, key);
    const info = await stat(path);
    return { body: await readFile(path), etag: `"${info.size}-${info.mtimeMs}"` };
  }
}
