import type { CountryLookup } from '../../lambdas/domain/country.js';
import { CountryDatabase } from '../../lambdas/adapters/country-database.js';
import { PACKAGED_COUNTRY_DATABASE } from '../geo.js';
import { rng, zipf } from './workload.js';
import {
  BROWSER_SHARES,
  DEVICE_SHARES,
  MARKETS,
  OS_SHARES,
  TABLET_BROWSER_SHARES,
  WIDTH_SHARES,
  addressPools,
  pick,
  userAgentsByCell,
  type Browser,
  type Device,
  type Market,
  type Os,
} from './audience.js';

/**
 * The demo site's traffic and payments (`npm start`, `footfall demo`,
 * `npm run bench`; `docs/demo.md`): a deterministic generator of believable
 * data. Visitors are drawn from the audience tables of `audience.ts`
 * (devices, systems and browsers in StatCounter's shares, real User-Agent
 * strings, countries with their languages, time zones and addresses the IP
 * database places there); traffic follows the working week and each
 * country's working day, grows over the period, and people come back; a
 * funnel leads from a visit to the pricing page, a signup and a payment,
 * often on a later visit. Payments are Stripe one-off and subscription
 * purchases in two currencies, renewals, cancellations, refunds, failures
 * and some without a visitor. Events come out as `footfall import events`
 * lines (with the visitor's address, no country: the import looks it up) and
 * payments as Stripe webhook events, so the demo goes through the real paths.
 */
export interface DemoOptions {
  site: string;
  days: number;
  visitsPerDay: number;
  /** The demo ends here (ms since epoch). */
  now: number;
  seed?: number;
  /** Where visitor addresses come from; default the packaged database. */
  countries?: CountryLookup;
}

const DAY = 86_400_000;
const MIN = 60_000;
const HOUR = 3_600_000;

const PAGES = [
  '/',
  '/pricing',
  '/features',
  '/docs',
  '/docs/install',
  '/docs/tracking',
  '/docs/payments',
  '/docs/api',
  '/blog',
  '/blog/launch',
  '/blog/privacy-first-analytics',
  '/blog/revenue-attribution',
  '/blog/ai-search-traffic',
  '/blog/self-hosting-on-aws',
  '/blog/plausible-alternative',
  '/blog/stripe-attribution',
  '/blog/cost-per-million-events',
  '/compare/plausible',
  '/compare/umami',
  '/compare/datafast',
  '/changelog',
  '/about',
  '/careers',
  '/contact',
  '/signup',
  '/login',
  '/integrations/stripe',
  '/integrations/paddle',
  '/integrations/lemonsqueezy',
  '/integrations/polar',
  '/use-cases/saas',
  '/use-cases/newsletters',
  '/use-cases/ecommerce',
  '/security',
  '/privacy',
  '/terms',
  '/status',
  '/docs/mcp',
  '/docs/sql',
  '/templates',
  '/billing',
];

const OUTBOUND = [
  'https://github.com/footfall/footfall',
  'https://x.com/footfall',
  'https://discord.gg/footfall',
  'https://aws.amazon.com/cdk/',
];

/**
 * Traffic per day of the week, Sunday first: a B2B site is read at work, so
 * weekends bring about half a weekday's visits and Friday afternoons thin out.
 */
export const WEEKDAY_FACTOR = [0.55, 1.05, 1.1, 1.08, 1.02, 0.88, 0.5];
/** Visits per local hour (0–23) on a working day: the office day, a lunch dip, a long evening tail. */
const WORKDAY_HOURS = [
  1, 0.6, 0.4, 0.3, 0.3, 0.5, 1.2, 2.5, 4.5, 6.5, 7.5, 7.8, 6.6, 7.2, 7.8, 7.4, 6.5, 5, 4, 3.8, 3.6, 3, 2.2, 1.5,
];
/** On weekends: later and flatter. */
const WEEKEND_HOURS = [
  1.5, 1, 0.7, 0.5, 0.4, 0.4, 0.6, 1, 1.8, 2.8, 3.6, 4, 4.2, 4.2, 4.1, 4, 4, 4, 4.2, 4.5, 4.5, 4, 3.2, 2.2,
];
const HOURS = Array.from({ length: 24 }, (_, h) => String(h));
const hourShares = (weights: number[]) => HOURS.map((h, i) => [h, weights[i] ?? 0] as const);

/**
 * The funnel, per visit (`docs/demo.md`): besides landing on it, a new
 * visitor goes on to the pricing page on a fifth of visits, a returning one on
 * three in ten; about one in eleven of those sign up (times the channel's
 * intent); three in ten signups pay, a third of them at once, the rest on a
 * later visit within two weeks.
 */
export const FUNNEL = { pricing: 0.2, pricingReturning: 0.3, signup: 0.09, pay: 0.3, payAtOnce: 0.35 } as const;

/** Where visits come from, how they land, and how ready they are to buy (`intent` scales the signup rate). */
const CHANNELS: Array<{
  name: string;
  weight: number;
  intent: number;
  referrers?: Array<readonly [string, number]>;
  utm?: string;
  landings: string[];
}> = [
  { name: 'Direct', weight: 22, intent: 1.1, landings: ['/', '/', '/pricing', '/docs', '/login'] },
  {
    name: 'Search',
    weight: 30,
    intent: 1,
    // StatCounter's search engine shares (2025: Google about 90%, Bing about 4%), with DuckDuckGo and Brave a little higher for a developer audience.
    referrers: [
      ['https://www.google.com/', 70],
      ['https://www.google.de/', 8],
      ['https://www.google.co.uk/', 7],
      ['https://www.bing.com/', 5],
      ['https://duckduckgo.com/', 4],
      ['https://search.brave.com/', 2],
      ['https://www.ecosia.org/', 1.5],
      ['https://search.yahoo.com/', 1.5],
      ['https://yandex.com/', 1],
    ],
    landings: [
      '/blog/plausible-alternative',
      '/blog/privacy-first-analytics',
      '/compare/plausible',
      '/compare/umami',
      '/docs/install',
      '/',
      '/blog/stripe-attribution',
      '/blog/revenue-attribution',
      '/docs/tracking',
    ],
  },
  {
    name: 'AI',
    weight: 8,
    intent: 1.5,
    referrers: [
      ['https://chatgpt.com/', 60],
      ['https://www.perplexity.ai/', 15],
      ['https://claude.ai/', 10],
      ['https://gemini.google.com/', 10],
      ['https://copilot.microsoft.com/', 5],
    ],
    landings: ['/', '/compare/plausible', '/compare/datafast', '/pricing', '/docs'],
  },
  {
    name: 'Communities',
    weight: 10,
    intent: 1.2,
    referrers: [
      ['https://news.ycombinator.com/item?id=41234567', 40],
      ['https://www.reddit.com/r/SaaS/comments/1abc/', 25],
      ['https://www.indiehackers.com/post/abc', 15],
      ['https://www.producthunt.com/posts/footfall', 12],
      ['https://lobste.rs/s/abc123', 8],
    ],
    landings: ['/blog/launch', '/', '/blog/cost-per-million-events', '/blog/self-hosting-on-aws'],
  },
  {
    name: 'Social',
    weight: 9,
    intent: 0.5,
    referrers: [
      ['https://t.co/aBcD', 35],
      ['https://www.linkedin.com/', 30],
      ['https://bsky.app/', 15],
      ['https://mastodon.social/', 10],
      ['https://l.facebook.com/', 10],
    ],
    landings: ['/blog/launch', '/blog/ai-search-traffic', '/', '/changelog'],
  },
  {
    name: 'Email',
    weight: 6,
    intent: 1.6,
    utm: 'utm_source=newsletter&utm_medium=email&utm_campaign=',
    landings: ['/changelog', '/blog/revenue-attribution', '/pricing'],
  },
  {
    name: 'Paid',
    weight: 6,
    intent: 0.9,
    utm: 'utm_source=google&utm_medium=cpc&utm_term=web+analytics&utm_campaign=',
    landings: ['/', '/pricing', '/compare/plausible'],
  },
  {
    name: 'Referral',
    weight: 9,
    intent: 1,
    // Directories, review sites and the blogs and newsletters that link to an analytics tool; hosts the channel rules leave to Referral.
    referrers: [
      ['https://alternativeto.net/software/plausible-analytics/about/', 30],
      ['https://www.g2.com/products/footfall/reviews', 12],
      ['https://www.capterra.com/p/footfall/', 8],
      ['https://indielytics.example.com/best-privacy-analytics-2026', 15],
      ['https://saasweekly.example.org/issue/212', 10],
      ['https://docs.stripe.com/partners', 10],
      ['https://www.awesome-selfhosted.net/tags/analytics.html', 15],
    ],
    landings: ['/', '/integrations/stripe', '/integrations/paddle', '/blog/launch', '/compare/plausible'],
  },
];
const CHANNEL_SHARES = CHANNELS.map((c) => [c.name, c.weight] as const);
const CAMPAIGNS = ['spring-launch', 'black-friday', 'weekly-digest', 'onboarding', 'retargeting'];
/**
 * `utm_content` of tagged links: which link or ad of a campaign was clicked.
 * Chosen from the visit's start minute, not drawn, so the rest of the
 * generated traffic stays what it was.
 */
const CONTENTS = ['header-link', 'hero-button', 'footer-link', 'ad-variant-a', 'ad-variant-b'];
/** Where a visit goes next, by weight; `/pricing` is the funnel's door. */
const NEXT_PAGES = PAGES.filter((p) => !['/signup', '/login', '/billing'].includes(p)).map(
  (p) => [p, p === '/pricing' ? 0 : p === '/' || p === '/features' || p.startsWith('/docs') ? 4 : 1] as const,
);

const hex = (random: () => number, n: number) =>
  Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');

/** One visit of the demo, as the generator planned it. */
export interface DemoVisit {
  visitor: string | null;
  ip: string;
  start: number;
  end: number;
  channel: string;
  /** What the visitor is, as drawn (the events carry the same through their User-Agent, width and address). */
  country: string;
  device: Device;
  os: Os;
  browser: Browser;
  returning: boolean;
  /** Local hour (0–23) and local day of the week (0 = Sunday) the visit began. */
  localHour: number;
  localWeekday: number;
  /** The funnel steps this visit took. */
  pricing: boolean;
  signup: boolean;
  checkout: boolean;
}

/** A Stripe webhook event of the demo: type, creation time (s) and object. */
export interface DemoWebhook {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
}

export interface DemoData {
  /** `footfall import events` lines, in time order. */
  events: string[];
  visits: DemoVisit[];
  /** Stripe events in time order. */
  webhooks: DemoWebhook[];
}

/** A person in the demo: drawn once, the same on every visit. */
interface Visitor {
  /** The tracker's id; null for the few whose browser keeps no storage (they get the daily hash). */
  id: string | null;
  ip: string;
  ua: string;
  market: Market;
  language: string;
  width: number;
  device: Device;
  os: Os;
  browser: Browser;
  /** How likely a return visit is, relative to others. */
  loyalty: number;
  lastSeen: number;
  signedUp: boolean;
  /** A later visit that will pay, when the signup decided so. */
  paysOnDay: number | null;
}

/** Draws a new visitor from the audience tables. */
function newVisitor(
  random: () => number,
  agents: ReturnType<typeof userAgentsByCell>,
  pools: Map<string, string[]>,
): Visitor {
  const market = pick(
    MARKETS.map((m) => [m.country, m.weight] as const),
    random,
  );
  const m = MARKETS.find((x) => x.country === market) as Market;
  const device = pick(DEVICE_SHARES, random);
  const os = pick(OS_SHARES[device], random);
  const browser = pick((device === 'Tablet' ? TABLET_BROWSER_SHARES[os] : undefined) ?? BROWSER_SHARES[os], random);
  const cell = agents.get(`${browser}|${os}`) as { phone: string[]; tablet: string[] };
  const strings = device === 'Tablet' ? cell.tablet : cell.phone;
  const pool = pools.get(market) as string[];
  return {
    id: random() < 0.05 ? null : `demo-${hex(random, 16)}`,
    ip: pool[Math.floor(random() * pool.length)] as string,
    ua: strings[Math.floor(random() * strings.length)] as string,
    market: m,
    language: pick(m.languages, random),
    width: Number(pick(WIDTH_SHARES[device], random)),
    device,
    os,
    browser,
    loyalty: random() ** 2,
    lastSeen: 0,
    signedUp: false,
    paysOnDay: null,
  };
}

/** Generates the demo (deterministic for the same options and database). */
export function generateDemo(options: DemoOptions): DemoData {
  const random = rng(options.seed ?? 20261121);
  const agents = userAgentsByCell();
  const pools = addressPools(options.countries ?? CountryDatabase.open(PACKAGED_COUNTRY_DATABASE));
  const start = Math.floor(options.now / DAY) * DAY - (options.days - 1) * DAY;
  const visitors: Visitor[] = [];
  const lines: Array<{ ts: number; line: string }> = [];
  const visits: DemoVisit[] = [];
  const purchases: Array<{ at: number; visitor: string | null; channel: string }> = [];

  for (let d = 0; d < options.days; d++) {
    const dayStart = start + d * DAY;
    const weekday = new Date(dayStart).getUTCDay();
    const growth = 0.7 + (0.6 * d) / Math.max(1, options.days - 1);
    const count = Math.round(options.visitsPerDay * (WEEKDAY_FACTOR[weekday] ?? 1) * growth * (0.9 + random() * 0.2));
    // Visitors who decided at signup to come back and pay today come first.
    const due = visitors.filter((v) => v.paysOnDay === d);
    // Returning visitors: seen in the last 30 days, the loyal ones more often.
    const recent = visitors.filter((v) => v.lastSeen >= dayStart - 30 * DAY && v.paysOnDay !== d);
    for (let i = 0; i < count + due.length; i++) {
      const paying = i < due.length ? due[i] : undefined;
      const returning = paying !== undefined || (recent.length > 50 && random() < 0.3);
      const who = paying ?? (returning ? pickLoyal(recent, random) : newVisitor(random, agents, pools));
      if (!returning) visitors.push(who);
      const hour = Number(pick(hourShares(weekday === 0 || weekday === 6 ? WEEKEND_HOURS : WORKDAY_HOURS), random));
      const at = dayStart + Math.floor((hour - who.market.utcOffset) * HOUR + random() * HOUR);
      if (at > options.now || at < start) continue;
      who.lastSeen = at;
      const drawn = paying || (returning && random() < 0.6) ? DIRECT.name : pick(CHANNEL_SHARES, random);
      const channel = CHANNELS.find((c) => c.name === drawn) ?? DIRECT;
      const visit = planVisit({ who, channel, paying: paying !== undefined, returning, random });
      let t = at;
      const base = {
        s: options.site,
        ua: who.ua,
        ip: who.ip,
        language: who.language,
        w: who.width,
        ...(who.id ? { v: who.id } : {}),
      };
      const push = (o: Record<string, unknown>) =>
        lines.push({ ts: t, line: JSON.stringify({ ...base, ...o, ts: new Date(t).toISOString() }) });
      const campaign = zipf(CAMPAIGNS, random);
      const query = channel.utm
        ? `?${channel.utm}${campaign}&utm_content=${CONTENTS[Math.floor(at / 60_000) % CONTENTS.length]}${channel.name === 'Paid' ? `&gclid=${hex(random, 12)}` : ''}`
        : '';
      const referrer = channel.referrers ? pick(channel.referrers, random) : null;
      // Custom properties, drawn from the visit's start so the random sequence (and every other figure) is unchanged.
      const plan = { p: { plan: demoPlan(at) } };
      visit.pages.forEach((path, p) => {
        push({
          n: 'pageview',
          u: `https://${options.site}${path}${p === 0 ? query : ''}`,
          r: p === 0 ? referrer : `https://${options.site}${visit.pages[p - 1]}`,
          ...(p === 0 ? { p: { logged_in: String(who.signedUp) } } : {}),
        });
        if (path === '/signup' && visit.signup)
          push({ n: 'goal', g: 'Signup', u: `https://${options.site}${path}`, ...plan });
        if (path === '/billing' && visit.checkout)
          push({ n: 'goal', g: 'Checkout', u: `https://${options.site}${path}`, ...plan });
        t += Math.floor(15_000 + random() * 150_000);
      });
      if (random() < 0.06)
        push({
          n: 'goal',
          g: 'Outbound Link: Click',
          l: zipf(OUTBOUND, random),
          u: `https://${options.site}${visit.pages[visit.pages.length - 1]}`,
        });
      if (visit.signup) who.signedUp = true;
      if (visit.payInDays !== null) who.paysOnDay = d + visit.payInDays;
      else if (paying) who.paysOnDay = null;
      if (visit.checkout && t + 2 * MIN <= options.now)
        purchases.push({ at: t + 2 * MIN, visitor: who.id, channel: channel.name });
      const local = new Date(at + who.market.utcOffset * HOUR);
      visits.push({
        visitor: who.id,
        ip: who.ip,
        start: at,
        end: t,
        channel: channel.name,
        country: who.market.country,
        device: who.device,
        os: who.os,
        browser: who.browser,
        returning,
        localHour: local.getUTCHours(),
        localWeekday: local.getUTCDay(),
        pricing: visit.pages.includes('/pricing'),
        signup: visit.signup,
        checkout: visit.checkout,
      });
    }
  }
  lines.sort((a, b) => a.ts - b.ts);
  return { events: lines.map((l) => l.line), visits, webhooks: stripeWebhooks(purchases, options.now, random) };
}

const DIRECT = CHANNELS[0]!;

/** The demo's `plan` property of a signup or checkout (half free, a third pro, the rest team), from the visit's start time. */
const demoPlan = (at: number): string => {
  const n = Math.floor(at / 60_000) % 6;
  return n < 3 ? 'free' : n < 5 ? 'pro' : 'team';
};

/** A returning visitor, the loyal ones more often. */
function pickLoyal(recent: readonly Visitor[], random: () => number): Visitor {
  for (;;) {
    const candidate = recent[Math.floor(random() * recent.length)] as Visitor;
    if (random() < 0.2 + candidate.loyalty) return candidate;
  }
}

/**
 * The pages of one visit and its funnel steps: a landing page by channel, a
 * few pages more, the pricing page with the funnel's odds, a signup from
 * there; a visitor who decided to pay goes through login and billing.
 */
function planVisit(input: {
  who: Visitor;
  channel: (typeof CHANNELS)[number];
  paying: boolean;
  returning: boolean;
  random: () => number;
}): {
  pages: string[];
  signup: boolean;
  checkout: boolean;
  /** Days until the visit that pays, when this signup will pay later. */
  payInDays: number | null;
} {
  const { who, channel, random } = input;
  if (input.paying) return { pages: ['/login', '/docs', '/billing'], signup: false, checkout: true, payInDays: null };
  const pages = [
    input.returning && who.signedUp
      ? '/login'
      : (channel.landings[Math.floor(random() * channel.landings.length)] as string),
  ];
  while (pages.length < 8 && random() < 0.5) pages.push(pick(NEXT_PAGES, random));
  const pricingOdds = input.returning ? FUNNEL.pricingReturning : FUNNEL.pricing;
  if (!pages.includes('/pricing') && random() < pricingOdds)
    pages.splice(1 + Math.floor(random() * pages.length), 0, '/pricing');
  const signup = !who.signedUp && pages.includes('/pricing') && random() < FUNNEL.signup * channel.intent;
  if (!signup) return { pages, signup, checkout: false, payInDays: null };
  pages.splice(pages.indexOf('/pricing') + 1, 0, '/signup');
  if (random() >= FUNNEL.pay * Math.min(1.5, channel.intent))
    return { pages, signup, checkout: false, payInDays: null };
  if (random() < FUNNEL.payAtOnce) {
    pages.splice(pages.indexOf('/signup') + 1, 0, '/billing');
    return { pages, signup, checkout: true, payInDays: null };
  }
  // Most who pay later do so within a few days; a two-week trial is the limit.
  return { pages, signup, checkout: false, payInDays: 1 + Math.floor(random() * random() * 14) };
}

/** Stripe events for the purchases: checkouts, first invoices, renewals, cancellations, refunds, failures. */
function stripeWebhooks(
  purchases: Array<{ at: number; visitor: string | null }>,
  now: number,
  random: () => number,
): DemoWebhook[] {
  const events: DemoWebhook[] = [];
  let n = 0;
  const id = (prefix: string) => `${prefix}_demo${(++n).toString(36).padStart(8, '0')}${hex(random, 6)}`;
  const push = (type: string, at: number, object: Record<string, unknown>) =>
    events.push({ id: id('evt'), type, created: Math.floor(at / 1000), object });
  for (const p of purchases) {
    // Some checkouts never got the visitor id into their metadata: Unattributed.
    const metadata = p.visitor && random() > 0.1 ? { footfall_visitor_id: p.visitor } : {};
    const customer = id('cus');
    const eur = random() < 0.3;
    const currency = eur ? 'eur' : 'usd';
    if (random() < 0.03) {
      push('payment_intent.payment_failed', p.at, {
        id: id('pi'),
        object: 'payment_intent',
        amount: eur ? 9900 : 9900,
        currency,
        customer,
        metadata,
        latest_charge: null,
      });
      continue;
    }
    if (random() < 0.6) {
      const amount = eur ? 2500 : 2900;
      const subscription = id('sub');
      const invoice = id('in');
      const pi = id('pi');
      push('checkout.session.completed', p.at, {
        id: id('cs'),
        object: 'checkout.session',
        mode: 'subscription',
        payment_status: 'paid',
        amount_total: amount,
        currency,
        payment_intent: null,
        invoice,
        subscription,
        customer,
        metadata,
      });
      push('customer.subscription.created', p.at, {
        id: subscription,
        object: 'subscription',
        status: 'active',
        customer,
        metadata,
      });
      push('invoice.paid', p.at, {
        id: invoice,
        object: 'invoice',
        amount_paid: amount,
        currency,
        billing_reason: 'subscription_create',
        customer,
        metadata: {},
        payment_intent: pi,
        charge: id('ch'),
        subscription,
        status_transitions: { paid_at: Math.floor(p.at / 1000) },
      });
      let at = p.at + 30 * DAY;
      for (; at <= now; at += 30 * DAY) {
        if (random() < 0.12) break;
        const renewal = id('in');
        push('invoice.paid', at, {
          id: renewal,
          object: 'invoice',
          amount_paid: amount,
          currency,
          billing_reason: 'subscription_cycle',
          customer,
          metadata: {},
          payment_intent: id('pi'),
          charge: id('ch'),
          subscription,
          status_transitions: { paid_at: Math.floor(at / 1000) },
        });
      }
      if (at <= now)
        push('customer.subscription.deleted', at, {
          id: subscription,
          object: 'subscription',
          status: 'canceled',
          customer,
          metadata,
        });
      continue;
    }
    const amount = eur ? 8900 : 9900;
    const pi = id('pi');
    const charge = id('ch');
    push('checkout.session.completed', p.at, {
      id: id('cs'),
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      amount_total: amount,
      currency,
      payment_intent: pi,
      invoice: null,
      subscription: null,
      customer,
      metadata,
    });
    if (random() < 0.06) {
      const partial = random() < 0.5;
      const refundAt = Math.min(now, p.at + Math.floor(random() * 10) * DAY + DAY);
      push('charge.refunded', refundAt, {
        id: charge,
        object: 'charge',
        amount,
        amount_refunded: partial ? Math.round(amount / 2) : amount,
        currency,
        refunded: !partial,
        payment_intent: pi,
        customer,
        metadata: {},
      });
    }
  }
  return events.sort((a, b) => a.created - b.created);
}
