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
    private readonly options: { batchSize?: number; onError?: (error: unknown) => void } = {},
  ) {}

  private get checkpointFile(): string {
    return join(this.streamDir, 'checkpoints', `${this.name}.json`);
  }

  /** Byte offset up to which records are processed. */
  async checkpoint(): Promise<number> {
    try {
      return (JSON.parse(await readFile(this.checkpointFile, 'utf8')) as { offset: number }).offset;
    } catch {
      return 0;
    }
  }

  private async saveCheckpoint(offset: number): Promise<void> {
    await mkdir(join(this.streamDir, 'checkpoints'), { recursive: true });
    const tmp = `${this.checkpointFile}.tmp`;
    await writeFile(tmp, JSON.stringify({ offset }));
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
    let offset = await this.checkpoint();
    for (;;) {
      const { records, nextOffset } = await readLocalStream(this.streamDir, offset, this.options.batchSize ?? 1000);
      if (records.length === 0) {
        if (nextOffset !== offset) await this.saveCheckpoint(nextOffset);
        return processed;
      }
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
