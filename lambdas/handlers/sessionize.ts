import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda';
import { sessionizeBatch, type SessionizeDeps } from '../services/sessionize.js';
import type { Telemetry } from '../observability/telemetry.js';

export interface SessionizeHandlerDeps extends SessionizeDeps, Telemetry {
  clock: () => number;
}

/**
 * The sessionizer Lambda for the Kinesis event source mapping (with
 * `ReportBatchItemFailures`). A batch is processed whole: on any failure it
 * reports its first record, so the mapping retries the batch from there (and
 * bisects it if the function itself fails); `sessionizeBatch` makes the retry
 * safe. Locally the stream poller calls the same handler with the same event.
 *
 * Metrics: `SessionizedEvents`, `SessionizerLagMs` (now minus the arrival
 * time of the batch's last record), `MalformedRecords`.
 */
export function createSessionizeHandler(deps: SessionizeHandlerDeps): (event: KinesisStreamEvent) => Promise<KinesisStreamBatchResponse> {
  const { logger, metrics } = deps;
  return async (event) => {
    const records = event.Records;
    const first = records[0];
    const last = records[records.length - 1];
    if (!first || !last) return { batchItemFailures: [] };
    const shard = first.eventID.split(':')[0] ?? 'shard';
    try {
      const outcome = await sessionizeBatch(
        deps,
        { shard, sequence: last.kinesis.sequenceNumber },
        records.map((r) => ({ sequenceNumber: r.kinesis.sequenceNumber, data: Buffer.from(r.kinesis.data, 'base64') })),
      );
      metrics.addMetric('SessionizedEvents', MetricUnit.Count, outcome.events);
      metrics.addMetric('SessionizerLagMs', MetricUnit.Milliseconds, Math.max(0, deps.clock() - last.kinesis.approximateArrivalTimestamp * 1000));
      if (outcome.malformed > 0) {
        metrics.addMetric('MalformedRecords', MetricUnit.Count, outcome.malformed);
        logger.warn('malformed stream records skipped', { count: outcome.malformed, shard });
      }
      metrics.publishStoredMetrics();
      logger.debug('batch sessionized', { shard, ...outcome });
      return { batchItemFailures: [] };
    } catch (error) {
      logger.error('batch failed; it will be retried', { shard, records: records.length, error: error as Error });
      return { batchItemFailures: [{ itemIdentifier: first.kinesis.sequenceNumber }] };
    }
  };
}
