import type { TrackedEvent } from './domain/tracked-event.js';
import type { SiteConfig } from './domain/site.js';

/**
 * The event stream (Kinesis in AWS, the durable local stream on a laptop).
 * `put` resolves only once every event is durably written; otherwise it throws
 * `UnavailableError` and the caller answers 503 so the client retries.
 */
export interface EventStream {
  put(events: readonly TrackedEvent[]): Promise<void>;
}

/** Looks up a site's configuration by its domain (lowercase). */
export interface SiteDirectory {
  getSite(domain: string): Promise<SiteConfig | null>;
}

/** The daily salts of visitor hashes: one random salt per UTC day, shared by every instance. */
export interface SaltStore {
  /** Salt of `day` (`YYYY-MM-DD`, UTC), created on first use; salts of older days are deleted. */
  saltFor(day: string): Promise<string>;
}
