import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { domainSchema } from '../lambdas/domain/site.js';
import type { ArchiveEraser } from '../lambdas/ports.js';

/** The local archive's deletions: its `site=<domain>/` directory (`local/archive.ts` layout). */
export class LocalArchiveEraser implements ArchiveEraser {
  constructor(private readonly archiveDir: string) {}

  /**
   * Removes `<archive>/site=<domain>/` and every Parquet file under it.
   * @throws ZodError when `site` is not a domain name (it becomes a path)
   */
  async deleteSite(site: string): Promise<number> {
    const dir = join(this.archiveDir, `site=${domainSchema.parse(site)}`);
    const files = await readdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    await rm(dir, { recursive: true, force: true });
    return files.filter((f) => f.endsWith('.parquet')).length;
  }
}
