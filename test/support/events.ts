import type { SiteConfig } from '../../lambdas/domain/site.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';

/** A real Chrome on macOS User-Agent (from isbot's browser fixtures). */
export const CHROME_UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

export function site(overrides: Partial<SiteConfig> = {}): SiteConfig {
  return {
    domain: 'example.com',
    timezone: 'Europe/Berlin',
    account: 'acme',
    attribution: 'last_non_direct',
    lookback_days: 30,
    rate_limit: 1000,
    created: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

let counter = 0;

/** A tracked event with sensible defaults, for adapter tests. */
export function trackedEvent(overrides: Partial<TrackedEvent> = {}): TrackedEvent {
  counter++;
  return {
    event_id: `evt-${counter}`,
    site: 'example.com',
    ts: Date.UTC(2026, 10, 21, 12, 0, counter % 60),
    type: 'pageview',
    goal: null,
    visitor_id: 'visitor-0001',
    visitor_kind: 'id',
    hostname: 'example.com',
    path: '/',
    referrer_host: null,
    channel: 'Direct',
    source: null,
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_term: null,
    utm_content: null,
    click_ids: null,
    link: null,
    country: 'DE',
    language: 'de',
    browser: 'Chrome',
    browser_version: '120',
    os: 'macOS',
    os_version: '10.15',
    device: 'Desktop',
    screen_width: 1440,
    props: null,
    ...overrides,
  };
}

/**
 * The test oracle of `docs/ingestion.md` "Request" for the event endpoint: a body holds an event
 * when it is JSON whose value, or one of whose first 50 items, is an object
 * with `n`, `u` and `s` (docs/ingestion.md); only such bodies get a 202.
 */
export function holdsAnEvent(text: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return false;
  }
  const isEvent = (item: unknown) =>
    typeof item === 'object' &&
    item !== null &&
    !Array.isArray(item) &&
    ['n', 'u', 's'].every((k) => (item as Record<string, unknown>)[k] != null);
  return (Array.isArray(json) ? json.slice(0, 50) : [json]).some(isEvent);
}
