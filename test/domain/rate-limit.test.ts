import { describe, expect, it } from 'vitest';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';

describe('SiteRateLimiter: per-site token buckets', () => {
  it('allows a burst of rate × 2, then refuses until tokens refill', () => {
    const limiter = new SiteRateLimiter(2);
    const t = 1_000_000;
    const allowed = Array.from({ length: 25 }, () => limiter.take('a.com', 10, t)).filter(Boolean).length;
    expect(allowed).toBe(20);
    expect(limiter.take('a.com', 10, t + 50)).toBe(false);
    expect(limiter.take('a.com', 10, t + 100)).toBe(true);
    expect(limiter.take('a.com', 10, t + 100)).toBe(false);
  });

  it('keeps sites apart', () => {
    const limiter = new SiteRateLimiter(1);
    expect(limiter.take('a.com', 1, 0)).toBe(true);
    expect(limiter.take('a.com', 1, 0)).toBe(false);
    expect(limiter.take('b.com', 1, 0)).toBe(true);
  });

  it('refills to capacity at most, and tolerates a clock going backwards', () => {
    const limiter = new SiteRateLimiter(1);
    expect(limiter.take('a.com', 2, 0)).toBe(true);
    expect(limiter.take('a.com', 2, 60_000)).toBe(true);
    expect(limiter.take('a.com', 2, 60_000)).toBe(true);
    expect(limiter.take('a.com', 2, 60_000)).toBe(false);
    expect(limiter.take('a.com', 2, 59_000)).toBe(false);
  });

  it('a time earlier than the last one does not drain the bucket (concurrent requests finish out of order)', () => {
    const limiter = new SiteRateLimiter(2);
    const t = 1_000_000;
    expect(limiter.take('a.com', 1_000, t)).toBe(true);
    // A request that took its time 500 ms earlier reaches the limiter after a later one:
    // before the fix it subtracted 500 ms × rate (500 tokens) from the bucket.
    for (let i = 0; i < 1_000; i++) expect(limiter.take('a.com', 1_000, t - 500)).toBe(true);
    expect(Array.from({ length: 2_000 }, () => limiter.take('a.com', 1_000, t)).filter(Boolean).length).toBe(999);
  });
});
