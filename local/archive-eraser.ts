import { readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { sqlLiteral } from './sql.js';
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

  /**
   * Each Parquet file of `site=<domain>/` that holds an event of `visitors`
   * is written again without them (DuckDB: `COPY (SELECT * … WHERE
   * visitor_id NOT IN …)`, same columns and ZSTD as the archive writes),
   * under a hidden temp name renamed over the original, so a reader sees the
   * old file or the new one. A file left with no event is deleted.
   * @throws ZodError when `site` is not a domain name
   */
  async eraseVisitors(site: string, visitors: readonly string[]): Promise<{ files: number; events: number }> {
    const dir = join(this.archiveDir, `site=${domainSchema.parse(site)}`);
    const names = (
      await readdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
      })
    ).filter((f) => f.endsWith('.parquet'));
    if (visitors.length === 0 || names.length === 0) return { files: 0, events: 0 };
    const list = visitors.map(sqlLiteral).join(', ');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    let files = 0;
    let events = 0;
    try {
      for (const name of names) {
        const file = join(dir, name);
        const counts = await connection.runAndReadAll(
          `SELECT count(*) FILTER (WHERE visitor_id IN (${list})), count(*) FROM read_parquet(${sqlLiteral(file)})`,
        );
        const [hit, total] = (counts.getRows()[0] ?? [0n, 0n]).map(Number) as [number, number];
        if (hit === 0) continue;
        files++;
        events += hit;
        if (hit === total) {
          await rm(file);
          continue;
        }
        const temp = join(dirname(file), `.${name.split('/').pop()}.erase.tmp`);
        await connection.run(
          `COPY (SELECT * FROM read_parquet(${sqlLiteral(file)}) WHERE visitor_id NOT IN (${list})) TO ${sqlLiteral(temp)} (FORMAT PARQUET, COMPRESSION ZSTD)`,
        );
        await rename(temp, file);
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    return { files, events };
  }
}
