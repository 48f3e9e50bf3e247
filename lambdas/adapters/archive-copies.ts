import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { addDays } from '../domain/range.js';
import { domainSchema } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
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

/**
 * What an instance keeps between runs, over all sites (`ArchiveCopies`): events held in memory (about 1 KB
 * each as JavaScript objects) and bytes of copies in `/tmp` (shared with the visit table's copies). Past
 * either, the sites used least recently are dropped whole, and read again from S3 at their next run.
 */
export interface ArchiveCopiesLimits {
  events: number;
  bytes: number;
}

/**
 * The operations function's limits: 400 MB of its 1,769 MB for events; 256 MiB of its 2 GiB `/tmp`, which the
 * table's copies may fill to 1.5 GiB (`VISIT_TABLE_TMP_MIB` less 512 MiB), leaving room for DuckDB's temp files.
 * Three partition days of the bench site (1M visits a month, 195,000 events at about 150 B) are about 30 MB.
 */
const ARCHIVE_COPIES_LIMITS: ArchiveCopiesLimits = { events: 400_000, bytes: 256 * 1024 * 1024 };

/** A copied object: the ETag of the version copied, its partition day, its file. */
interface Copy {
  etag: string;
  dt: string;
  file: string;
  bytes: number;
}

/** A partition day's events as read last, and the digest of the objects they were read from (`listingDigest`). */
interface ReadDay {
  digest: string;
  events: TrackedEvent[];
}

/**
 * Digest of a listing (`ArchiveSnapshot.digest`): SHA-256 of its keys and ETags in key order.
 */
function listingDigest(listed: readonly ArchiveObject[]): string {
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
 * copies of each partition day laid out as the archive is
 * (`<root>/<domain>/<day>/site=<domain>/dt=<day>/<digest of key>.parquet`), a reader over one day's directory.
 * The events of a partition day are kept in memory with the digest of the objects they were read
 * from, so a run reads again only the days whose objects changed (today's, at a site with traffic).
 * A copy not listed any more in its span is removed, and copies and events of days more than
 * `KEEP_DAYS_BEFORE` before a span are dropped, so an instance holds a few days of a site, and of
 * all its sites at most `ArchiveCopiesLimits` (least recently used sites go first). A cold
 * instance (or a process) starts with none: the site's directory is cleared at its first use.
 * One caller at a time (the operations function's reserved concurrency is 1).
 */
export class ArchiveCopies implements RecentArchive {
  private readonly root: string;
  private readonly copies = new Map<string, Map<string, Copy>>();
  private readonly days = new Map<string, Map<string, ReadDay>>();
  /** Sites in order of use, least recent first (a Map keeps insertion order). */
  private readonly used = new Map<string, true>();

  constructor(
    private readonly objects: ArchiveObjects,
    root: string,
    private readonly limits: ArchiveCopiesLimits = ARCHIVE_COPIES_LIMITS,
  ) {
    this.root = resolve(root);
  }

  /** @throws Error when the site is not a domain name, or the listing fails */
  async snapshot(site: string, fromDt: string, toDt: string): Promise<ArchiveSnapshot> {
    const domain = domainSchema.parse(site);
    const listed = await this.objects.list(domain, fromDt, toDt);
    return {
      digest: listingDigest(listed),
      events: () => this.eventsOf(domain, fromDt, toDt, listed),
    };
  }

  /**
   * The span's events, a partition day at a time in day order (so in time order, as the day is the
   * event's UTC day): a day whose objects are those it was last read from keeps its events, held in
   * memory; another is read again from its copies, fetched as needed. At every run of a site with
   * traffic only today's partition changed, so only it is read.
   */
  private async eventsOf(
    site: string,
    fromDt: string,
    toDt: string,
    listed: readonly ArchiveObject[],
  ): Promise<AsyncIterable<TrackedEvent[]>> {
    const copies = await this.copiesOf(site);
    const read = this.days.get(site) ?? new Map<string, ReadDay>();
    this.days.set(site, read);
    const keys = new Set(listed.map((o) => o.key));
    const keepFrom = addDays(fromDt, -KEEP_DAYS_BEFORE);
    for (const [key, copy] of copies) {
      const gone = copy.dt >= fromDt && copy.dt <= toDt && !keys.has(key);
      if (gone || copy.dt < keepFrom) {
        copies.delete(key);
        await rm(copy.file, { force: true });
      }
    }
    for (const dt of read.keys()) if (dt < keepFrom) read.delete(dt);
    const byDay = new Map<string, ArchiveObject[]>();
    for (const o of listed) {
      const dt = dtOfKey(o.key);
      if (dt === null) continue;
      const day = byDay.get(dt);
      if (day) day.push(o);
      else byDay.set(dt, [o]);
    }
    const pages: TrackedEvent[][] = [];
    for (const [dt, objects] of [...byDay].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const digest = listingDigest(objects);
      let day = read.get(dt);
      if (day?.digest !== digest) {
        day = { digest, events: await this.readDay(site, dt, objects, copies) };
        read.set(dt, day);
      }
      pages.push(day.events);
    }
    await this.evictBut(site);
    return (async function* () {
      yield* pages;
    })();
  }

  /** A partition day's events from its copies, each object fetched unless copied with its ETag. */
  private async readDay(
    site: string,
    dt: string,
    objects: readonly ArchiveObject[],
    copies: Map<string, Copy>,
  ): Promise<TrackedEvent[]> {
    const missing = objects.filter((o) => copies.get(o.key)?.etag !== o.etag);
    for (let i = 0; i < missing.length; i += PARALLEL_GETS)
      await Promise.all(missing.slice(i, i + PARALLEL_GETS).map((o) => this.download(site, dt, o, copies)));
    const events: TrackedEvent[] = [];
    // The day's own directory: the reader's view reads the footer of every file under its root.
    for await (const page of await new DuckDbArchiveReader(join(this.root, site, dt)).events(site, dt, dt))
      for (const e of page) events.push(e);
    return events;
  }

  /** Drops the least recently used sites other than `site` while the copies exceed a limit (`ArchiveCopiesLimits`). */
  private async evictBut(site: string): Promise<void> {
    this.used.delete(site);
    this.used.set(site, true);
    const held = (other: string) => {
      let [events, bytes] = [0, 0];
      for (const d of this.days.get(other)?.values() ?? []) events += d.events.length;
      for (const c of this.copies.get(other)?.values() ?? []) bytes += c.bytes;
      return { events, bytes };
    };
    const total = { events: 0, bytes: 0 };
    for (const other of new Set([...this.copies.keys(), ...this.days.keys()])) {
      const h = held(other);
      total.events += h.events;
      total.bytes += h.bytes;
    }
    for (const other of [...this.used.keys()]) {
      if (other === site || (total.events <= this.limits.events && total.bytes <= this.limits.bytes)) continue;
      const h = held(other);
      total.events -= h.events;
      total.bytes -= h.bytes;
      this.used.delete(other);
      this.days.delete(other);
      this.copies.delete(other);
      await rm(join(this.root, other), { recursive: true, force: true });
    }
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

  /** Copies one object of partition day `dt`: a temp file renamed over the copy, so DuckDB never reads half of one. */
  private async download(site: string, dt: string, object: ArchiveObject, copies: Map<string, Copy>): Promise<void> {
    const name = createHash('sha256').update(object.key).digest('hex').slice(0, 32);
    const file = join(this.root, site, dt, `site=${site}`, `dt=${dt}`, `${name}.parquet`);
    const { body, etag } = await this.objects.get(object.key);
    await mkdir(dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.get`;
    await writeFile(temp, body);
    await rename(temp, file);
    copies.set(object.key, { etag: etag || object.etag, dt, file, bytes: body.byteLength });
  }
}
