/**
 * The cost model's inputs that are not measured (`docs/cost.md`, "Prices used" and "Assumptions"):
 * AWS list prices in us-east-1 in USD, without the free tier, and the usage the model assumes.
 * Every figure is sourced there; `bench/cost-model.ts` does the arithmetic.
 */
import { SWEEP_WINDOW_MS } from '../lambdas/handlers/sessionize-objects.js';

/** List prices, USD (`docs/cost.md`, "Prices used"). */
export const PRICES = {
  apiPerMillion: 1.0,
  lambdaRequestPerMillion: 0.2,
  /** Duration per GB-second by instruction set (`Architectures` of the function). */
  lambdaGbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  kinesisShardHour: 0.015,
  kinesisPutUnitPerMillion: 0.014,
  kinesisOnDemandStreamHour: 0.04,
  kinesisOnDemandInPerGb: 0.08,
  kinesisOnDemandOutPerGb: 0.04,
  firehoseIngestPerGb: 0.029,
  firehoseConversionPerGb: 0.018,
  firehosePartitioningPerGb: 0.02,
  firehoseObjectsPerThousand: 0.005,
  firehoseJqHour: 0.07,
  s3GbMonth: 0.023,
  s3PutPerThousand: 0.005,
  s3GetPerThousand: 0.0004,
  /** LIST requests are billed as PUT, COPY and POST requests. */
  s3ListPerThousand: 0.005,
  sqsPerMillion: 0.4,
  wruPerMillion: 0.625,
  rruPerMillion: 0.125,
  dynamoGbMonth: 0.25,
  /** Standard-IA table class: storage per GB-month, and its request prices as a multiple of Standard's. */
  dynamoIaGbMonth: 0.1,
  dynamoIaRequestFactor: 1.25,
  pitrGbMonth: 0.2,
  logsIngestPerGb: 0.5,
  logsStoredGbMonth: 0.03,
  metricMonth: 0.3,
  alarmMetricMonth: 0.1,
  tracePerMillion: 5.0,
  kmsKeyMonth: 1.0,
  kmsRequestPer10k: 0.03,
  cloudFrontRequestPer10k: 0.01,
  cloudFrontGb: 0.085,
  cloudFrontFunctionPerMillion: 0.1,
  /** Data transfer out of AWS to the internet (Lambda function URL and API Gateway responses), first 10 TB. */
  transferOutGb: 0.09,
  schedulerPerMillion: 1.0,
  /** Athena: per TB scanned, each query counted as at least 10 MB (Athena pricing). */
  athenaPerTb: 5.0,
  athenaMinBytes: 10 * 1024 * 1024,
} as const;

/**
 * What the model assumes a site does with its stack, per month, beside the events it counts
 * (`docs/cost.md`, "Assumptions"). Usage that grows with traffic is stated per million events,
 * with a floor for a small site whose owner still opens the dashboard.
 */
export const USAGE = {
  /** Dashboard loads: 50 per million events, at least one a day. About 20 requests a load (the page, then about 19 report calls). */
  dashboardLoadsPerMillion: 50,
  dashboardLoadsMin: 30,
  reportCallsPerLoad: 19,
  /** Report API (`/api/v1`) and MCP calls besides the dashboard. */
  apiCallsPerMillion: 1_000,
  apiCallsMin: 100,
  mcpCallsPerMillion: 200,
  mcpCallsMin: 20,
  /** Payment webhooks: provider deliveries (every retry counted), at least a few a month for a site that sells. */
  webhooksPerMillion: 1_000,
  webhooksMin: 20,
  /** An uptime monitor calling `/health` every 5 minutes. */
  healthChecks: 8_640,
  /** Share of events that also fetch `/v.js` (cached a day by the browser). */
  scriptLoadsPerEvent: 0.1,
  /** Firehose bills every record in 5 KB increments (ingestion and format conversion). */
  firehoseRecordKb: 5,
  enrichedEventKb: 0.7,
  parquetBytesPerEvent: 150,
  jqSecondsPerRecord: 20e-6,
  /** Active sites at a traffic level: each sends in every Firehose buffer (one object per site and buffer when partitioned). */
  activeSites: (events: number): number =>
    events <= 100_000 ? 1 : events <= 1_000_000 ? 5 : events <= 10_000_000 ? 50 : 200,
  /**
   * Seconds an invocation of each function takes (its work is DynamoDB, Kinesis or Firehose round
   * trips, so they do not depend on the memory size the template gives it): the hot path and the
   * sessionizer as in `docs/cost.md`, the others the local bench's medians rounded up.
   */
  secondsPerInvocation: {
    event: 0.025,
    tracker: 0.005,
    health: 0.005,
    report: 0.15,
    mcp: 0.2,
    webhook: 0.2,
    app: 0.1,
    scheduled: 1.0,
    // An idle run: two Queries of the queues and back (an erasure's runs are priced per erasure, docs/cost.md "Operations").
    operations: 0.1,
    // Priced per import, not per month: a history import is a one-off (docs/cost.md, "Importing a provider's history").
    imports: 0,
    // A filtered call's DuckDB work at one vCPU (1769 MB): between a selective 30-day load's 0.24 s a call and an
    // unselective one's 3.2 s (docs/cost.md, "Filtered reports"), nearer the first, which warm files make common.
    filtered: 0.5,
  },
  /**
   * Share of report and MCP calls that carry filters, which the report and MCP functions pass to the filtered
   * function (`-c filteredReports=true`) and wait for: one dashboard load in four filtered (a filtered load makes
   * about as many report calls as an unfiltered one). Assumed, not measured: Plausible publishes no share.
   */
  filteredCallShare: 0.25,
  /**
   * CPU seconds of a request at one full vCPU, the part of `secondsPerInvocation` that scales with
   * the memory size (Lambda's vCPU share is memory / 1,769 MB): the event function's parse,
   * enrichment and both Firehose puts through the SDK, `npm run bench -- --only ingest` ("CPU per
   * request with both Firehose puts", 2.0 ms on the shared bench machine: an upper bound). Its
   * `secondsPerInvocation` is at the 512 MB it had when the 25 ms were set.
   */
  cpuSecondsPerInvocation: { event: 0.002 },
  /**
   * The visit table's writer in each operations run, per active site (`docs/cost.md`, "Filtered reports"; measured
   * locally, not in AWS). The open days come from the archive's objects (`ArchiveCopies`), not an Athena query. A run
   * is busy when the site's archive received an object since the last (Firehose writes one per site and 15-minute
   * buffer with traffic: at `E` events a month a run is busy with probability 1 − e^(−E / 2,880), traffic taken as
   * even, an upper bound), and idle otherwise: it lists, finds nothing new, and reads and writes nothing.
   * Seconds at one vCPU (1,769 MB) are the CPU seconds `npm run bench -- --only writer` measures (user and system, every
   * thread; `docs/benchmarks.md`, "The visit table writer"), which one vCPU spends in sequence, plus `requestSeconds` of
   * S3 and DynamoDB round trips: a busy run 0.17 s at 10k events a month and 2.79 s at the bench site's 2.33M, so
   * `busySeconds` 0.16 s and 1.13 µs per event of the site's month; an idle run 0.01 s. A cold instance copies the
   * span's objects again (`objectsPerColdRun`: three partition days of 96) and reads every day of it: 0.4 s more at
   * 10k, 5.45 s more at 2.33M (`coldExtraSeconds`); assumed once every two hours (`coldRunsPerSiteMonth`; Lambda
   * states no instance lifetime). S3 requests of a run: the table's four family listings and the open days' one
   * (`listsPerRun`); a busy run's GetObject of its new object, and its puts of the open file and the writer's state
   * (`putsPerBusyRun`); once a day the archive's listing for changed days (`archiveObjectsPerSiteMonth`, kept
   * `monthsOfData`, one LIST per 1,000).
   *
   * On demand (`docs/data-model.md`, "Filtered reports", *On demand*): a site's table is refreshed at the 15-minute
   * runs only while someone looked at its reports within the hour, otherwise once a day. Priced assumption, not
   * measured: **every active site is looked at `lookedHoursPerSiteDay` hours a day, in one sitting**, so a day has
   * the daily run, the refresh the first look asks for, and 4 runs an hour for those hours and the hour after
   * (`refreshesPerSiteDay`); a cold instance at the daily run, at the first refresh of the sitting and every two
   * hours of it after (`coldRefreshesPerSiteDay`). `docs/cost.md` shows the flag's row at 0, 1 and 4 hours.
   * Each operations run reads the LOOK items (two consistent Queries, under 4 KB: 2 RRU), and a looked site's
   * report and MCP instances write a look at most every 5 minutes each (`lookWritesPerLookedHour`: two instances).
   */
  visitTableWriter: {
    lookedHoursPerSiteDay: 1,
    lookRruPerRun: 2,
    lookWritesPerLookedHour: 24,
    busySeconds: { base: 0.16, perMonthlyEvent: 1.13e-6 },
    idleSeconds: 0.01,
    requestSeconds: 0.3,
    coldExtraSeconds: { base: 0.4, perMonthlyEvent: 2.18e-6 },
    objectsPerColdRun: 288,
    listsPerRun: 5,
    putsPerBusyRun: 2,
    archiveObjectsPerSiteMonth: 2_880,
  },
  /** The visit table's stored bytes per event (`docs/data-model.md`: 40.74 MiB a year at 120,000 visits a month, 2.34 events a visit). */
  visitTableBytesPerEvent: (40.74 * 1024 * 1024) / (12 * 120_000 * 2.34),
  /** The memory size `secondsPerInvocation` was taken at, MB. */
  secondsMeasuredAtMb: 512,
  /** Memory at which a function gets one full vCPU (Lambda developer guide, "Memory and computing power"). */
  vcpuMb: 1769,
  /** The sessionizer's seconds per event (DynamoDB round trips dominate). */
  sessionizeSecondsPerEvent: 0.002,
  /** The sessionizer's seconds per invocation besides its events: the journal's round trips and the raw object's GET (or the sweep's LIST). */
  sessionizeSecondsPerInvocation: 0.05,
  /**
   * The ingest journal (`lambdas/adapters/dynamo/ingest-journal.ts`), items under 1 KB: an object
   * notified once is journaled (consistent Get of its seen record, cursor Update, entry and seen
   * Puts), then taken (consistent Get of the cursor, a Query of the page and an empty one, cursor
   * Update, entry Delete), and before its archive forward the seen record is read again
   * (`IngestJournal.claim`): 5 WRU and 5 RRU. A sweep Gets the cursor and makes an empty Query, and
   * Gets the seen record of each object of its window (`sweepWindowMinutes`, already journaled).
   */
  journalWruPerObject: 5,
  journalRruPerObject: 5,
  /**
   * The sessionizer's seconds per raw object to forward its events to the archive (one
   * PutRecordBatch of a few records, `FirehoseArchiveDelivery`): one round trip, as the journal's.
   */
  archiveForwardSecondsPerObject: 0.02,
  /** Events a record the archive's multi-record deaggregation takes (Firehose developer guide: "capped at 500 per record"). */
  eventsPerPackedRecord: 500,
  journalRruPerSweep: 2,
  sweepWindowMinutes: SWEEP_WINDOW_MS / 60_000,
  /** ListObjectsV2 requests a sweep makes: one per raw hour prefix its window spans (1 + window / 60 minutes on average). */
  listsPerSweep: 1 + SWEEP_WINDOW_MS / 3_600_000,
  /** DynamoDB request units per call of the functions the sessionize bench does not measure (`docs/benchmarks.md`). */
  rruPerReportCall: 40,
  wruPerWebhook: 10,
  rruPerWebhook: 10,
  wruPerAppCall: 1,
  rruPerAppCall: 2,
  /** An idle run of the operations function: a consistent Query of each queue partition, under 4 KB each. */
  rruPerOperationsRun: 2,
  /** Bytes written to CloudWatch Logs per invocation of a function that logs Lambda's platform lines (START, END, REPORT) and its own. */
  logBytesPerInvocation: 700,
  /** An API Gateway access log line (`lib/http-api.ts`). */
  logBytesPerApiRequest: 121,
  logStoredShare: 0.2,
  /** Response bytes out to the internet: the event function's 202, the script, a report or MCP answer. */
  responseBytes: { event: 300, tracker: 1_400, report: 6_000, mcp: 6_000, app: 2_000, webhook: 300, health: 300 },
  /** The dashboard's static files per load through CloudFront (index.html, script, stylesheet: cached after the first). */
  dashboardBytesPerLoad: 200_000,
  cloudFrontFunctionCallsPerLoad: 3,
  /** CloudFront standard log bytes per request (app mode's access log bucket). */
  accessLogBytesPerRequest: 500,
  /** KMS requests: a webhook container opens each secret once (one Decrypt per cold start and provider). */
  kmsRequestsPerWebhook: 0.2,
  /** Principals that use a stream's KMS key, each asking KMS for a data key about every 5 minutes. */
  kinesisKmsPrincipals: 4,
  /**
   * Share of a month's hours in which each custom metric (`CUSTOM_METRICS`) has data: CloudWatch
   * bills a metric by the hours it receives data, and each is emitted only when there is something to
   * count. A healthy stack writes no malformed record (dropped events are log lines, not a metric).
   */
  customMetricHours: { MalformedRecords: 0 },
  monthsOfData: 12,
  monthHours: 730,
  monthSeconds: 30 * 24 * 3600,
} as const;

/** The goal, USD a month everything included, by events a month (`docs/cost.md`, "Result"). */
export const GOALS: ReadonlyMap<number, number> = new Map([
  [10_000, 2],
  [100_000, 3],
  [1_000_000, 8],
  [10_000_000, 30],
  [100_000_000, 200],
]);
