import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readLocalStream, type LocalStreamRecord } from '../lambdas/adapters/local-stream.js';

/**
 * What a consumer of the local stream does with one batch. It returns the
 * sequence number of the first record it could not process (Kinesis partial
 * batch response), or null when all succeeded; throwing fails the whole batch.
 * The poller checkpoints up to (not including) the first failure.
 */
export type BatchConsumer = (records: LocalStreamRecord[]) => Promise<string | null>;

/**
 * The local stand-in for a Kinesis event source mapping: reads the durable
 * local stream from the consumer's checkpoint, hands batches to `consume`,
 * and checkpoints after success (`<stream>/checkpoints/<name>.json`, written
 * atomically). A failed batch is retried on the next poll from the same place,
 * so consumers see each record at least once.
 */
export class LocalStreamPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly streamDir: string,
    private readonly name: string,
    private readonly consume: BatchConsumer,
    private readonly options: {
      batchSize?: number;
      onError?: (error: unknown) => void;
      /**
       * Retry a failed or interrupted batch with exactly its records, not a longer batch from the same
       * place (the log may have grown meanwhile): its size is saved before it is handed over. For a
       * consumer whose output is named by the batch (the sessionizer's raw object, forwarded to the
       * archive once).
       */
      stableRetries?: boolean;
    } = {},
  ) {}

  private get checkpointFile(): string {
    return join(this.streamDir, 'checkpoints', `${this.name}.json`);
  }

  /** Byte offset up to which records are processed. */
  async checkpoint(): Promise<number> {
    return (await this.saved()).offset;
  }

  /** The checkpoint and, with `stableRetries`, the size of the batch handed over from it and not finished. */
  private async saved(): Promise<{ offset: number; inflight?: number }> {
    try {
      const saved = JSON.parse(await readFile(this.checkpointFile, 'utf8')) as { offset: number; inflight?: number };
      return { offset: saved.offset, ...(typeof saved.inflight === 'number' ? { inflight: saved.inflight } : {}) };
    } catch {
      return { offset: 0 };
    }
  }

  private async saveCheckpoint(offset: number, inflight?: number): Promise<void> {
    await mkdir(join(this.streamDir, 'checkpoints'), { recursive: true });
    const tmp = `${this.checkpointFile}.tmp`;
    await writeFile(tmp, JSON.stringify(inflight === undefined ? { offset } : { offset, inflight }));
    await rename(tmp, this.checkpointFile);
  }

  /**
   * Processes everything available now, batch after batch; returns how many
   * records were processed. Concurrent calls share one run.
   * @throws what the consumer threw, after checkpointing the batches before it
   */
  drain(): Promise<number> {
    this.running ??= this.drainOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async drainOnce(): Promise<number> {
    let processed = 0;
    let { offset, inflight } = await this.saved();
    for (;;) {
      const size = inflight ?? this.options.batchSize ?? 1000;
      inflight = undefined;
      const { records, nextOffset } = await readLocalStream(this.streamDir, offset, size);
      if (records.length === 0) {
        if (nextOffset !== offset) await this.saveCheckpoint(nextOffset);
        return processed;
      }
      if (this.options.stableRetries) await this.saveCheckpoint(offset, records.length);
      const failedAt = await this.consume(records);
      if (failedAt !== null) {
        const done = records.some((r) => r.sequenceNumber < failedAt);
        await this.saveCheckpoint(done ? Number(failedAt) : offset);
        throw new Error(`consumer ${this.name} failed at record ${failedAt}`);
      }
      processed += records.length;
      offset = nextOffset;
      await this.saveCheckpoint(offset);
    }
  }

  /** Polls every `intervalMs` until `stop()`. Errors go to `onError`; the failed batch is retried next time. */
  start(intervalMs: number): void {
    const tick = async () => {
      try {
        await this.drain();
      } catch (error) {
        this.options.onError?.(error);
      }
      if (this.timer) this.timer = setTimeout(tick, intervalMs);
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  /** Stops polling and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}
