import type { SiteConfig } from '../domain/site.js';
import type { SiteDirectory } from '../ports.js';

/** How long the ingest and sessionizer functions keep a site (ms): a change of the SITE item reaches them within this. */
export const SITE_CACHE_TTL_MS = 30_000;

/**
 * Keeps site lookups in memory for `ttlMs` (unknown sites too, so a flood of
 * events for a site that does not exist costs one read per TTL). The ingest
 * path reads a site per request; DynamoDB is read at most once per TTL per site.
 */
export class CachedSiteDirectory implements SiteDirectory {
  private readonly entries = new Map<string, { site: SiteConfig | null; until: number }>();

  constructor(
    private readonly inner: SiteDirectory,
    private readonly ttlMs = SITE_CACHE_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  async getSite(domain: string): Promise<SiteConfig | null> {
    const now = this.clock();
    const hit = this.entries.get(domain);
    if (hit && hit.until > now) return hit.site;
    const site = await this.inner.getSite(domain);
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(domain, { site, until: now + this.ttlMs });
    return site;
  }
}
