import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ArchiveChanges } from '../lambdas/ports.js';

/**
 * The local archive's changed partitions (`ArchiveChanges`): the `dt=` directories of
 * `<archive>/site=<domain>/` holding a Parquet file whose modification time is at or after the
 * given instant, as S3's LastModified answers in AWS.
 */
export class LocalArchiveChanges implements ArchiveChanges {
  private readonly root: string;

  /** @param root the archive's directory (`site=<d>/dt=<day>/part-….parquet` under it) */
  constructor(root: string) {
    this.root = resolve(root);
  }

  async changedDays(site: string, sinceMs: number): Promise<string[]> {
    const dir = join(this.root, `site=${site}`);
    if (!existsSync(dir)) return [];
    const days: string[] = [];
    for (const name of await readdir(dir)) {
      const day = /^dt=(\d{4}-\d{2}-\d{2})$/.exec(name)?.[1];
      if (day === undefined) continue;
      const files = (await readdir(join(dir, name))).filter((f) => f.endsWith('.parquet'));
      const times = await Promise.all(files.map(async (f) => (await stat(join(dir, name, f))).mtimeMs));
      if (times.some((t) => t >= sinceMs)) days.push(day);
    }
    return days.sort();
  }
}
