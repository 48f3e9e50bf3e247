import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** Namespace of every Footfall metric (CloudWatch EMF). */
export const METRICS_NAMESPACE = 'Footfall';

/**
 * Every custom metric Footfall emits (`docs/deploy.md`, "Metrics"), each with
 * the `service` dimension only: one billed metric per name and function.
 * Anything an AWS metric already counts (accepted events, sessionizer lag,
 * latency, invocations) is not one of them.
 */
export const CUSTOM_METRICS = {
  /** Stream records the sessionizer skipped because they are not tracked events. */
  malformed: 'MalformedRecords',
} as const;

/** The structured logger and EMF metrics of one handler (Powertools for AWS Lambda). */
export interface Telemetry {
  logger: Logger;
  metrics: Metrics;
}

/**
 * Telemetry for `service`. Log level comes from `POWERTOOLS_LOG_LEVEL` (default
 * INFO); metrics are off when `POWERTOOLS_METRICS_DISABLED=true`, as in local mode,
 * where EMF lines on stdout would only be noise.
 */
export function createTelemetry(service: string): Telemetry {
  return {
    logger: new Logger({ serviceName: service }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: service }),
  };
}
