import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import { REFERRERS, rng, zipf } from '../local/demo/workload.js';
import {
  BROWSER_SHARES,
  DEVICE_SHARES,
  MARKETS,
  OS_SHARES,
  pick,
  WIDTH_SHARES,
  type Device,
} from '../local/demo/audience.js';

/**
 * The benchmarks' traffic (`docs/benchmarks.md`): a site's events in arrival order over a time range, from a
 * visitor population that comes back.
 *
 * - **Visitors**: each makes k visits, k Zipf-distributed (P(k) ∝ k^-2.5, at most 365): 75% come
 *   once, the mean is about 1.9 visits, a few loyal readers come weekly or more. Their later visits
 *   follow the first after exponential gaps (mean 12 days); visits after the range's end are not
 *   made. A visitor keeps their market, device, system and browser (`local/demo/audience.ts`).
 * - **Rhythm**: visits are placed by rejection sampling on a working-hours curve in the visitor's
 *   own time zone (market UTC offsets) and a weekday factor (Saturday 0.55, Sunday 0.6), so the
 *   site sees a day-night and a weekly cycle.
 * - **Visits**: 1 + geometric page views (mean 2.2), 20 s–3 min apart, landing pages Zipf over
 *   the site's pages; 3.4% of visits sign up (goal `Signup`), 8% click out (`Outbound Link: Click`);
 *   channels and referrers per visit; 10% carry a campaign.
 * - **Arrival**: events come in time order across all concurrent visits (a heap merges them), as a
 *   Kinesis shard receives them; 2% are late (their `ts` up to 20 minutes before their arrival).
 *
 * Deterministic for a seed. Memory: 16 bytes per visit plus the visits in progress.
 */
export interface TrafficOptions {
  site: string;
  /** Range of arrival times, epoch ms, [from, to). */
  from: number;
  to: number;
  /** Traffic level: events a month (30 days); the range gets its share. */
  eventsPerMonth: number;
  seed?: number;
  /** Visitor ids are `<prefix><n>`; default `visitor-` (ids must have 8 to 64 characters, `docs/ingestion.md` "The event's fields"). */
  visitorPrefix?: string;
}

/** Mean events per visit of the model: page views (1 + geometric, each further page with 0.55) plus goals (0.114). */
export const EVENTS_PER_VISIT = 1 / 0.45 + 0.034 + 0.08;
const MONTH_MS = 30 * 86_400_000;
/** The bench site's pages: eight top-level pages, 400 blog posts and 80 docs pages. */
export const PATHS = [
  '/',
  '/pricing',
  '/features',
  '/docs',
  '/signup',
  '/blog',
  '/changelog',
  '/about',
  ...Array.from({ length: 400 }, (_, i) => `/blog/post-${i}`),
  ...Array.from({ length: 80 }, (_, i) => `/docs/page-${i}`),
];
const CHANNELS = ['Direct', 'Search', 'AI', 'Social', 'Communities', 'Email', 'Paid', 'Referral'];
const WEB_REFERRERS = REFERRERS.filter((r) => r.startsWith('http')).map((r) => new URL(r).hostname);

/** Zipf(2.5) on 1..365 by inverse transform of its cumulative weights. */
const VISITS_CDF = (() => {
  const weights = Array.from({ length: 365 }, (_, i) => (i + 1) ** -2.5);
  const total = weights.reduce((a, b) => a + b, 0);
  let sum = 0;
  return weights.map((w) => (sum += w / total));
})();
function visitsOf(random: () => number): number {
  const r = random();
  let lo = 0;
  let hi = VISITS_CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((VISITS_CDF[mid] ?? 1) < r) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** Relative traffic by local hour (0–23): low at night, a working-day plateau, an evening tail. */
const HOURLY = [
  0.15, 0.1, 0.08, 0.07, 0.08, 0.15, 0.3, 0.55, 0.85, 1, 1, 0.97, 0.9, 0.95, 1, 0.98, 0.9, 0.8, 0.65, 0.55, 0.5, 0.45,
  0.35, 0.22,
];
const WEEKDAY = [0.6, 1, 1, 1, 0.98, 0.9, 0.55]; // Sunday first, as Date.getUTCDay.

function rhythm(t: number, utcOffsetHours: number): number {
  const local = new Date(t + utcOffsetHours * 3_600_000);
  return (HOURLY[local.getUTCHours()] ?? 0) * (WEEKDAY[local.getUTCDay()] ?? 0);
}

interface Profile {
  market: (typeof MARKETS)[number];
  device: Device;
  os: string;
  browser: string;
  width: number;
}

function profileOf(visitor: number, seed: number): Profile {
  const random = rng((seed * 2_654_435_761) ^ visitor);
  const market = MARKETS[
    pickIndex(
      MARKETS.map((m) => m.weight),
      random,
    )
  ] as (typeof MARKETS)[number];
  const device = pick(DEVICE_SHARES, random);
  const os = pick(OS_SHARES[device], random);
  const browser = pick(BROWSER_SHARES[os], random);
  return { market, device, os, browser, width: Number(pick(WIDTH_SHARES[device], random)) };
}

function pickIndex(weights: readonly number[], random: () => number): number {
  let r = random() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) if ((r -= weights[i] ?? 0) < 0) return i;
  return weights.length - 1;
}

/** A min-heap of events by arrival time. */
class ArrivalHeap {
  private readonly items: Array<{ at: number; event: TrackedEvent }> = [];
  get size(): number {
    return this.items.length;
  }
  peek(): number {
    return this.items[0]?.at ?? Infinity;
  }
  push(at: number, event: TrackedEvent): void {
    const a = this.items;
    a.push({ at, event });
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((a[parent] as { at: number }).at <= at) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }
  pop(): TrackedEvent {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]!.at < a[m]!.at) m = l;
        if (r < a.length && a[r]!.at < a[m]!.at) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top.event;
  }
}

/** The visits of the range: start times and visitors, sorted by start (typed arrays: 16 B a visit). */
export function planVisits(options: TrafficOptions): { start: Float64Array; visitor: Uint32Array } {
  const seed = options.seed ?? 1;
  const random = rng(seed);
  const span = options.to - options.from;
  const wantedVisits = (options.eventsPerMonth * (span / MONTH_MS)) / EVENTS_PER_VISIT;
  // Visitors whose first visit falls in the range or up to 60 days before it (returning ones).
  const lead = Math.min(60 * 86_400_000, span);
  const starts: number[] = [];
  const visitors: number[] = [];
  const place = (t: number, offset: number): number => {
    // Rejection sampling on the rhythm, within a day of t.
    for (let tries = 0; tries < 50; tries++) {
      const candidate = t + (random() - 0.5) * 86_400_000;
      if (random() < rhythm(candidate, offset)) return candidate;
    }
    return t;
  };
  // Visitors come until the range holds the visits the traffic level asks for.
  for (let visitor = 0; starts.length < wantedVisits; visitor++) {
    const offset = profileOf(visitor, seed).market.utcOffset;
    const k = visitsOf(random);
    let t = place(options.from - lead + random() * (span + lead), offset);
    for (let i = 0; i < k && t < options.to; i++) {
      if (t >= options.from) {
        starts.push(t);
        visitors.push(visitor);
      }
      t = place(t + -Math.log(1 - random()) * 12 * 86_400_000 + 1_800_000, offset);
    }
  }
  const order = Array.from(starts.keys()).sort((a, b) => (starts[a] as number) - (starts[b] as number));
  return {
    start: Float64Array.from(order, (i) => starts[i] as number),
    visitor: Uint32Array.from(order, (i) => visitors[i] as number),
  };
}

/** The events of the range's `index`-th visit (`planVisits`), with their arrival times. */
export function visitEvents(
  options: TrafficOptions,
  start: number,
  visitor: number,
  index: number,
): Array<{ at: number; event: TrackedEvent }> {
  const seed = options.seed ?? 1;
  const random = rng((seed * 40_503) ^ (index * 2_246_822_519));
  const profile = profileOf(visitor, seed);
  const channel = zipf(CHANNELS, random);
  const referrer = channel === 'Direct' ? null : zipf(WEB_REFERRERS, random);
  const campaign = random() < 0.1 ? `c${Math.floor(random() * 20)}` : null;
  const id = `${options.visitorPrefix ?? 'visitor-'}${visitor}`;
  const pages: string[] = [zipf(PATHS, random)];
  while (random() < 0.55) pages.push(zipf(PATHS, random));
  const goals = [...(random() < 0.034 ? ['Signup'] : []), ...(random() < 0.08 ? ['Outbound Link: Click'] : [])];
  const out: Array<{ at: number; event: TrackedEvent }> = [];
  let t = start;
  const base = {
    site: options.site,
    visitor_id: id,
    visitor_kind: 'id' as const,
    hostname: options.site,
    referrer_host: referrer,
    channel,
    source: null,
    utm_source: campaign ? 'newsletter' : null,
    utm_medium: campaign ? 'email' : null,
    utm_campaign: campaign,
    utm_term: null,
    utm_content: null,
    click_ids: null,
    link: null,
    country: profile.market.country,
    language: 'en',
    browser: profile.browser,
    browser_version: '131',
    os: profile.os,
    os_version: null,
    device: profile.device,
    screen_width: profile.width,
    props: null,
  };
  const steps: Array<{ type: 'pageview' | 'goal'; goal: string | null; path: string }> = [
    ...pages.map((path) => ({ type: 'pageview' as const, goal: null, path })),
    ...goals.map((goal) => ({ type: 'goal' as const, goal, path: pages[pages.length - 1] as string })),
  ];
  for (const [n, step] of steps.entries()) {
    if (n > 0) t += 20_000 + random() * 160_000;
    const late = random() < 0.02 ? random() * 1_200_000 : 0;
    out.push({
      at: t,
      event: {
        ...base,
        event_id: `${id}-${index}-${n}`,
        ts: Math.round(t - late),
        type: step.type,
        goal: step.goal,
        path: step.path,
      },
    });
  }
  return out;
}

/** The site's events over the range in arrival order (see the module's doc). */
export function* trafficStream(options: TrafficOptions): Generator<TrackedEvent> {
  const plan = planVisits(options);
  const heap = new ArrivalHeap();
  for (let i = 0; i < plan.start.length; i++) {
    const start = plan.start[i] as number;
    while (heap.size > 0 && heap.peek() <= start) yield heap.pop();
    for (const { at, event } of visitEvents(options, start, plan.visitor[i] as number, i))
      if (at < options.to) heap.push(at, event);
  }
  while (heap.size > 0) yield heap.pop();
}
