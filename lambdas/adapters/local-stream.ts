import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { TrackedEvent } from '../domain/tracked-event.js';
import { UnavailableError } from '../domain/errors.js';
import type { EventStream } from '../ports.js';
import { encodeEvent, partitionKey } from './stream-record.js';

/**
 * The durable local stand-in for the Kinesis stream: one append-only log file
 * `<dir>/events.log`, written with O_APPEND (one write() per group of puts, so
 * writers in several processes never interleave) and fsync'ed before `put`
 * resolves — a 202 is only answered for events on disk, and `kill -9` after it
 * loses nothing.
 *
 * Line format: `crc32hex \t arrivalMs \t partitionKey \t json`. Every write
 * starts with a newline, so a line torn by a crash is closed by the next writer
 * and then skipped by readers (its CRC fails); its events were never
 * acknowledged. A record's sequence number is the byte offset of its line,
 * zero-padded so that string order is log order.
 */
export const STREAM_FILE = 'events.log';

/** The part of a file the stream writes through: appends and the durability call (`fdatasync`). */
export type LogFile = Pick<FileHandle, 'write' | 'datasync' | 'close'>;

/** Opens the log for appending; a test passes a file layer that loses what was not synced (`docs/reliability.md` "The checks", power loss). */
export type LogFileOpener = (path: string) => Promise<LogFile>;

const openForAppend: LogFileOpener = (path) => open(path, 'a');

function formatLine(arrivalMs: number, key: string, data: Buffer): string {
  const body = `${arrivalMs}\t${key}\t${data.toString('utf8')}`;
  return `${crc32(body).toString(16).padStart(8, '0')}\t${body}\n`;
}

export class LocalEventStream implements EventStream {
  private queue: Array<{ data: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  private flushing = false;

  private constructor(
    private readonly handle: LogFile,
    private readonly clock: () => number,
  ) {}

  /** Opens (creating if needed) the log under `dir`; `openFile` is the file layer (the real one unless a test says otherwise). */
  static async open(
    dir: string,
    clock: () => number = Date.now,
    openFile: LogFileOpener = openForAppend,
  ): Promise<LocalEventStream> {
    await mkdir(dir, { recursive: true });
    return new LocalEventStream(await openFile(join(dir, STREAM_FILE)), clock);
  }

  put(events: readonly TrackedEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    const arrival = this.clock();
    const data = events.map((e) => formatLine(arrival, partitionKey(e), encodeEvent(e))).join('');
    return new Promise((resolve, reject) => {
      this.queue.push({ data, resolve, reject });
      void this.flush();
    });
  }

  /** Group commit: every put queued while an fsync runs goes out in the next single write + fsync. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          const buffer = Buffer.from(`\n${batch.map((b) => b.data).join('')}`, 'utf8');
          let written = 0;
          while (written < buffer.length) {
            written += (await this.handle.write(buffer, written)).bytesWritten;
          }
          await this.handle.datasync();
          for (const b of batch) b.resolve();
        } catch (error) {
          for (const b of batch) b.reject(new UnavailableError('local stream write failed', error));
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  async close(): Promise<void> {
    while (this.flushing || this.queue.length > 0) await new Promise((r) => setTimeout(r, 1));
    await this.handle.close();
  }
}

/** One record read back from the local log, in the shape the Kinesis event source mapping delivers. */
export interface LocalStreamRecord {
  sequenceNumber: string;
  partitionKey: string;
  /** Arrival time, ms since epoch. */
  approximateArrivalTimestamp: number;
  data: Buffer;
}

/** Fixed width of sequence numbers, so that comparing them as strings follows log order. */
export const SEQUENCE_DIGITS = 20;
export const toSequenceNumber = (offset: number): string => String(offset).padStart(SEQUENCE_DIGITS, '0');

/**
 * Reads up to `maxRecords` complete records at or after byte `fromOffset`.
 * Returns them with `nextOffset`, where the next read should start; a last line
 * still being written is left for the next read. `corrupt` counts torn lines skipped.
 */
export async function readLocalStream(
  dir: string,
  fromOffset: number,
  maxRecords: number,
  chunkBytes = 4 * 1024 * 1024,
): Promise<{ records: LocalStreamRecord[]; nextOffset: number; corrupt: number }> {
  const records: LocalStreamRecord[] = [];
  let corrupt = 0;
  let offset = fromOffset;
  let handle: FileHandle;
  try {
    handle = await open(join(dir, STREAM_FILE), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records, nextOffset: fromOffset, corrupt };
    throw error;
  }
  try {
    let carry = Buffer.alloc(0);
    let carryStart = offset;
    while (records.length < maxRecords) {
      const chunk = Buffer.alloc(chunkBytes);
      const { bytesRead } = await handle.read(chunk, 0, chunkBytes, carryStart + carry.length);
      if (bytesRead === 0) break;
      const buffer = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      let lineStart = 0;
      let newline: number;
      while (records.length < maxRecords && (newline = buffer.indexOf(10, lineStart)) !== -1) {
        const lineOffset = carryStart + lineStart;
        if (newline > lineStart) {
          const record = parseLine(buffer.subarray(lineStart, newline), lineOffset);
          if (record) records.push(record);
          else corrupt++;
        }
        lineStart = newline + 1;
        offset = carryStart + lineStart;
      }
      carry = buffer.subarray(lineStart);
      carryStart += lineStart;
    }
  } finally {
    await handle.close();
  }
  return { records, nextOffset: offset, corrupt };
}

function parseLine(line: Buffer, offset: number): LocalStreamRecord | null {
  const text = line.toString('utf8');
  const tab = text.indexOf('\t');
  if (tab !== 8) return null;
  const body = text.slice(9);
  if (crc32(body).toString(16).padStart(8, '0') !== text.slice(0, 8)) return null;
  const [arrival, key] = body.split('\t', 2);
  const dataStart = (arrival?.length ?? 0) + (key?.length ?? 0) + 2;
  return {
    sequenceNumber: toSequenceNumber(offset),
    partitionKey: key ?? '',
    approximateArrivalTimestamp: Number(arrival),
    data: Buffer.from(body.slice(dataStart), 'utf8'),
  };
}
