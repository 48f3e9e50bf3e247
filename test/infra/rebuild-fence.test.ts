import { describe, expect, it } from 'vitest';
import { FIREHOSE_BUFFER_INTERVAL } from '../../lib/archive.js';
import { FUNCTIONS } from '../../lib/functions.js';
import { AWS_DRAIN_MS, AWS_FENCE_MS, FIREHOSE_BUFFER_S, SESSIONIZER_TIMEOUT_S } from '../../cli/rebuild.js';
import { SITE_CACHE_TTL_MS } from '../../lambdas/adapters/cached-site-directory.js';

/** The waits of `footfall rebuild --aws` (docs/rebuild.md "The fence") follow the stack they wait for. */
describe('the rebuild fence matches the deployed stack', () => {
  it('waits out the Firehose buffer and a sessionizer run as the stack configures them', () => {
    expect(FIREHOSE_BUFFER_S).toBe(FIREHOSE_BUFFER_INTERVAL.toSeconds());
    expect(SESSIONIZER_TIMEOUT_S).toBe(FUNCTIONS.sessionize.timeoutSeconds);
  });

  it('fences for 7 minutes and drains for 2', () => {
    expect(AWS_FENCE_MS).toBe(SITE_CACHE_TTL_MS + 60_000 + 300_000 + 30_000);
    expect(AWS_FENCE_MS).toBe(420_000);
    expect(AWS_DRAIN_MS).toBe(120_000);
  });
});
