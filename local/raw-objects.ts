import { mkdir, open, readFile, readdir, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LocalStreamRecord } from '../lambdas/adapters/local-stream.js';
import { RAW_PREFIX, rawHourPrefix } from '../lambdas/adapters/s3-raw-objects.js';
import type { RawObjects } from '../lambdas/ports.js';

const HOUR_MS = 3_600_000;

/**
 * The local stand-in of the ingest delivery's objects (`docs/ingestion.md`, "Choosing the
 * ingestion path"): `deliver` writes a batch of the local stream as one object under
 * `<dir>/raw/<UTC yyyy/MM/dd/HH>/ingest-<first>-<last>` (the hour of its first record's arrival,
 * its first and last sequence numbers), JSON lines as Firehose writes them, fsync'ed and renamed
 * into place, so a reader never sees part of one. The same batch delivered again (a retry after a
 * crash) is the same key with the same bytes: an object with a stable identity, as on S3.
 */
export class LocalRawObjects implements RawObjects {
  constructor(private readonly dir: string) {}

  private path(key: string): string {
    if (!key.startsWith(RAW_PREFIX) || key.includes('..')) throw new Error(`not a raw object key: ${key}`);
    return join(this.dir, key);
  }

  /** Writes the records as one object and returns its key. */
  async deliver(records: readonly LocalStreamRecord[]): Promise<string> {
    const first = records[0];
    const last = records[records.length - 1];
    if (!first || !last) throw new Error('nothing to deliver');
    const key = `${rawHourPrefix(first.approximateArrivalTimestamp)}ingest-${first.sequenceNumber}-${last.sequenceNumber}`;
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.tmp`;
    const file = await open(temp, 'w');
    try {
      await file.writeFile(Buffer.concat(records.flatMap((r) => [r.data, Buffer.from('\n')])));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
    return key;
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async listSince(sinceMs: number): Promise<string[]> {
    const keys: string[] = [];
    for (let hour = Math.floor(sinceMs / HOUR_MS) * HOUR_MS; hour <= Date.now(); hour += HOUR_MS) {
      const prefix = rawHourPrefix(hour);
      let names: string[];
      try {
        names = await readdir(this.path(prefix));
      } catch {
        continue;
      }
      for (const name of names.filter((n) => !n.endsWith('.tmp')).sort()) {
        const { mtimeMs } = await stat(this.path(`${prefix}${name}`));
        if (mtimeMs >= sinceMs) keys.push(`${prefix}${name}`);
      }
    }
    return keys;
  }
}
