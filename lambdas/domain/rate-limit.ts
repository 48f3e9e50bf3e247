/**
 * Per-site token buckets (`docs/ingestion.md` "Silent drops", "Request": events over the site's rate limit are
 * dropped silently). State lives in the ingest instance's memory, so the limit is
 * per instance; the clock is passed in so the rule stays a function of its inputs.
 */
export class SiteRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** @param burstSeconds how many seconds of the rate a bucket holds (burst size = rate × burstSeconds). */
  constructor(private readonly burstSeconds = 2) {}

  /**
   * Takes one token for `site` at time `nowMs` (ms since epoch) from a bucket
   * refilled at `perSecond` tokens per second. Returns false when the bucket is empty.
   *
   * Times may arrive out of order (concurrent requests take their time before
   * awaiting the site and the salt); an earlier time than the bucket's refills
   * nothing and takes nothing away beyond its one token.
   */
  take(site: string, perSecond: number, nowMs: number): boolean {
    const capacity = perSecond * this.burstSeconds;
    const bucket = this.buckets.get(site) ?? { tokens: capacity, at: nowMs };
    const refilled = Math.min(capacity, bucket.tokens + (Math.max(0, nowMs - bucket.at) / 1000) * perSecond);
    const allowed = refilled >= 1;
    bucket.tokens = allowed ? refilled - 1 : refilled;
    bucket.at = Math.max(bucket.at, nowMs);
    this.buckets.set(site, bucket);
    return allowed;
  }
}
