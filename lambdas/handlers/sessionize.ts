import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda';
import { sessionizeBatch, type SessionizeDeps, type SessionizeOutcome } from '../services/sessionize.js';
import type { BatchMarker, DynamoBatchMarkers } from '../adapters/dynamo/batch-marker-store.js';
import { CUSTOM_METRICS, type Telemetry } from '../observability/telemetry.js';
import type { ShardVisitCache } from '../adapters/shard-visit-cache.js';

export interface SessionizeHandlerDeps extends SessionizeDeps, Telemetry {
  markers: Pick<DynamoBatchMarkers, 'get' | 'put'>;
  /**
   * Visits this container wrote, kept per shard for its next batch (the
   * Lambda entry and the local server; absent: every visitor is read strongly).
   */
  visitCache?: ShardVisitCache;
}

const seq = (s: string) => BigInt(s);

/**
 * The batches to run for the records delivered: the records as one batch,
 * unless the shard's last started batch began at the same record and ended
 * earlier — a retry that grew after a failure. That batch is run again as it
 * was first, then the rest: a rollup item that took the failed attempt's
 * checkpoint must not take its records again under a later one.
 */
export function plannedBatches<T extends { sequence: string }>(
  records: readonly T[],
  marker: BatchMarker | null,
): T[][] {
  const first = records[0];
  const last = records[records.length - 1];
  if (!first || !last || !marker || marker.first !== first.sequence || seq(marker.last) >= seq(last.sequence))
    return [records.slice()];
  const head = records.filter((r) => seq(r.sequence) <= seq(marker.last));
  const tail = records.filter((r) => seq(r.sequence) > seq(marker.last));
  return [head, tail];
}

/**
 * The sessionizer Lambda for the Kinesis event source mapping (with
 * `ReportBatchItemFailures`). A batch is processed whole: on any failure it
 * reports its first record, so the mapping retries the batch from there (and
 * bisects it if the function itself fails); `sessionizeBatch` makes the retry
 * safe. Locally the stream poller calls the same handler with the same event.
 *
 * Metrics: `MalformedRecords` (records that are not tracked events, skipped),
 * only when there are some. Events, lag and failures are AWS metrics of the
 * stream and the function (Kinesis `IncomingRecords`, Lambda `IteratorAge`,
 * `Errors`; `docs/deploy.md`, "Metrics").
 */
export function createSessionizeHandler(
  deps: SessionizeHandlerDeps,
): (event: KinesisStreamEvent) => Promise<KinesisStreamBatchResponse> {
  const { logger, metrics } = deps;
  return async (event) => {
    const records = event.Records;
    const first = records[0];
    const last = records[records.length - 1];
    if (!first || !last) return { batchItemFailures: [] };
    const shard = first.eventID.split(':')[0] ?? 'shard';
    try {
      const all = records.map((r) => ({
        sequence: r.kinesis.sequenceNumber,
        record: { sequenceNumber: r.kinesis.sequenceNumber, data: Buffer.from(r.kinesis.data, 'base64') },
      }));
      const outcome = { events: 0, malformed: 0 };
      let found = await deps.markers.get(shard);
      for (const batch of plannedBatches(all, found)) {
        const end = batch[batch.length - 1]?.sequence ?? last.kinesis.sequenceNumber;
        const marker = { first: batch[0]?.sequence ?? end, last: end };
        // Decided from the marker found before this batch puts its own: was the shard's last batch this container's?
        const visits = deps.visitCache?.batch(shard, found, deps.visits, deps.sites);
        let done: SessionizeOutcome;
        try {
          await deps.markers.put(shard, marker);
          done = await sessionizeBatch(
            visits ? { ...deps, visits } : deps,
            { shard, sequence: end },
            batch.map((b) => b.record),
          );
        } catch (error) {
          visits?.abandon();
          throw error;
        }
        visits?.commit(marker);
        found = marker;
        outcome.events += done.events;
        outcome.malformed += done.malformed;
      }
      // Events and lag are AWS metrics already (Kinesis IncomingRecords, Lambda IteratorAge, the alarm's): only malformed records are ours.
      if (outcome.malformed > 0) {
        metrics.addMetric(CUSTOM_METRICS.malformed, MetricUnit.Count, outcome.malformed);
        metrics.publishStoredMetrics();
        logger.warn('malformed stream records skipped', { count: outcome.malformed, shard });
      }
      logger.debug('batch sessionized', { shard, ...outcome, records: records.length });
      return { batchItemFailures: [] };
    } catch (error) {
      logger.error('batch failed; it will be retried', { shard, records: records.length, error: error as Error });
      return { batchItemFailures: [{ itemIdentifier: first.kinesis.sequenceNumber }] };
    }
  };
}
