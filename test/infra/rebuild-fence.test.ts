import { describe, expect, it } from 'vitest';
import { FIREHOSE_BUFFER_INTERVAL, FIREHOSE_DELIVERY_FACTOR } from '../../lib/archive.js';
import { ARCHIVE_FRESHNESS_ALARM_SECONDS } from '../../lib/footfall-stack.js';
import { FUNCTIONS } from '../../lib/functions.js';
import {
  AWS_DRAIN_MS,
  AWS_FENCE_MS,
  FIREHOSE_BUFFER_S,
  FIREHOSE_DELIVERY_S,
  SESSIONIZER_TIMEOUT_S,
} from '../../cli/rebuild.js';
import { SITE_CACHE_TTL_MS } from '../../lambdas/adapters/cached-site-directory.js';

/** The waits of `footfall rebuild --aws` (docs/rebuild.md "The fence") follow the stack they wait for. */
describe('the rebuild fence matches the deployed stack', () => {
  it('waits out Firehose delivery (1.5 × the buffer interval) and a sessionizer run as the stack configures them', () => {
    expect(FIREHOSE_BUFFER_S).toBe(FIREHOSE_BUFFER_INTERVAL.toSeconds());
    expect(FIREHOSE_DELIVERY_S).toBe(FIREHOSE_BUFFER_INTERVAL.toSeconds() * FIREHOSE_DELIVERY_FACTOR);
    expect(SESSIONIZER_TIMEOUT_S).toBe(FUNCTIONS.sessionize.timeoutSeconds);
  });

  it('fences for 26.5 minutes (the ingest buffer and notification, then the 15-minute archive buffer) and drains for 2', () => {
    expect(AWS_FENCE_MS).toBe(SITE_CACHE_TTL_MS + 60_000 + 120_000 + 1_350_000 + 30_000);
    expect(AWS_FENCE_MS).toBe(1_590_000);
    expect(AWS_DRAIN_MS).toBe(120_000);
  });

  it('alarms on archive freshness only beyond what the buffer itself delays', () => {
    // DataFreshness grows to the delivery delay in a healthy stack; the alarm must sit above it.
    expect(ARCHIVE_FRESHNESS_ALARM_SECONDS).toBeGreaterThanOrEqual(
      FIREHOSE_BUFFER_INTERVAL.toSeconds() * FIREHOSE_DELIVERY_FACTOR + 300,
    );
  });
});
