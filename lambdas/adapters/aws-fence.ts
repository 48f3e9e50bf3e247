/** The deployed stack's waits (`docs/rebuild.md`, "The fence"): what a rebuild, an erasure and a site deletion wait out in AWS. */
import { SITE_CACHE_TTL_MS } from './cached-site-directory.js';

/** The sessionizer function's timeout, s (lib/functions.ts): a batch that read the SITE item before a change ends within it. */
export const SESSIONIZER_TIMEOUT_S = 60;
/** Firehose's buffer interval, s (`FIREHOSE_BUFFER_INTERVAL`, lib/archive.ts: 15 minutes). */
export const FIREHOSE_BUFFER_S = 900;
/**
 * How long after it was put an event may still be on its way to the Parquet archive, s: the buffer
 * interval × 1.5, dynamic partitioning's end-to-end delay (`FIREHOSE_DELIVERY_FACTOR`, lib/archive.ts,
 * from the Firehose developer guide, "Buffer data for dynamic partitioning").
 */
export const FIREHOSE_DELIVERY_S = FIREHOSE_BUFFER_S * 1.5;
/**
 * How long an event may take to reach the sessionizer, which forwards it to the archive, s: the
 * ingest delivery's 60 s buffer and S3's notification (seconds, at times a minute: S3 user guide,
 * "Amazon S3 Event Notifications"). `docs/ingestion.md`, "Archive packed".
 */
export const INGEST_TO_SESSIONIZER_S = 120;
/** Slack on top of each wait, ms. */
const MARGIN_MS = 30_000;

/**
 * The deployed stack's fence (`docs/rebuild.md`): the SITE cache's TTL (every
 * sessionizer sees `building`), a sessionizer run that started before it, and
 * the way of an event put before to the archive (the ingest delivery and S3's notification to the
 * sessionizer, which forwards it, then Firehose's delivery delay): 26.5 minutes.
 */
export const AWS_FENCE_MS =
  SITE_CACHE_TTL_MS +
  SESSIONIZER_TIMEOUT_S * 1000 +
  INGEST_TO_SESSIONIZER_S * 1000 +
  FIREHOSE_DELIVERY_S * 1000 +
  MARGIN_MS;
/**
 * How long the deployed stack may still use a generation the SITE item no
 * longer names: the cache TTL and a sessionizer run (report functions read the
 * SITE item per request and time out after 10 s): 2 minutes.
 */
export const AWS_DRAIN_MS = SITE_CACHE_TTL_MS + SESSIONIZER_TIMEOUT_S * 1000 + MARGIN_MS;
