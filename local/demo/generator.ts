import { REFERRERS, browserUserAgents, rng, zipf } from './workload.js';

/**
 * The demo site's traffic and payments (`npm start`, `footfall demo`,
 * `npm run bench`): a deterministic generator of realistic data — weekly
 * seasonality and growth, a channel mix with AI and Communities, many
 * landing pages, countries, devices, goals and outbound clicks; Stripe
 * one-off and subscription purchases in two currencies, renewals,
 * cancellations, refunds, failures and some payments without a visitor.
 * Events come out as `footfall import events` lines and payments as Stripe
 * webhook events, so the demo goes through the real paths.
 */
export interface DemoOptions {
  site: string;
  days: number;
  visitsPerDay: number;
  /** The demo ends here (ms since epoch). */
  now: number;
  seed?: number;
}

const DAY = 86_400_000;
const MIN = 60_000;

const PAGES = [
  '/', '/pricing', '/features', '/docs', '/docs/install', '/docs/tracking', '/docs/payments', '/docs/api', '/blog',
  '/blog/launch', '/blog/privacy-first-analytics', '/blog/revenue-attribution', '/blog/ai-search-traffic', '/blog/self-hosting-on-aws',
  '/blog/plausible-alternative', '/blog/stripe-attribution', '/blog/cost-per-million-events', '/compare/plausible', '/compare/umami',
  '/compare/datafast', '/changelog', '/about', '/careers', '/contact', '/signup', '/login', '/integrations/stripe', '/integrations/paddle',
  '/integrations/lemonsqueezy', '/integrations/polar', '/use-cases/saas', '/use-cases/newsletters', '/use-cases/ecommerce', '/security',
  '/privacy', '/terms', '/status', '/docs/mcp', '/docs/sql', '/templates',
];

/** Channel mix: weight, where visits come from, and how often they buy. */
const CHANNELS: Array<{ name: string; weight: number; buy: number; referrers?: string[]; utm?: string }> = [
  { name: 'Direct', weight: 24, buy: 0.02 },
  { name: 'Search', weight: 28, buy: 0.025, referrers: ['https://www.google.com/', 'https://www.google.de/', 'https://www.bing.com/', 'https://duckduckgo.com/', 'https://search.brave.com/'] },
  { name: 'AI', weight: 9, buy: 0.045, referrers: ['https://chatgpt.com/', 'https://www.perplexity.ai/', 'https://claude.ai/', 'https://gemini.google.com/', 'https://copilot.microsoft.com/'] },
  { name: 'Communities', weight: 11, buy: 0.035, referrers: ['https://news.ycombinator.com/item?id=41234567', 'https://www.reddit.com/r/SaaS/comments/1abc/', 'https://www.indiehackers.com/post/abc', 'https://www.producthunt.com/posts/footfall', 'https://lobste.rs/s/abc123'] },
  { name: 'Social', weight: 10, buy: 0.01, referrers: ['https://t.co/aBcD', 'https://www.linkedin.com/', 'https://bsky.app/', 'https://l.facebook.com/', 'https://mastodon.social/'] },
  { name: 'Email', weight: 6, buy: 0.05, utm: 'utm_source=newsletter&utm_medium=email&utm_campaign=' },
  { name: 'Paid', weight: 6, buy: 0.02, utm: 'utm_source=google&utm_medium=cpc&utm_term=web+analytics&utm_campaign=' },
  { name: 'Referral', weight: 6, buy: 0.02, referrers: REFERRERS.filter((r) => r.includes('blog')).slice(0, 12) },
];
const CAMPAIGNS = ['spring-launch', 'black-friday', 'weekly-digest', 'onboarding', 'retargeting'];
const COUNTRIES: Array<[string, string, number]> = [
  ['US', 'en-US,en;q=0.9', 30], ['DE', 'de-DE,de;q=0.9,en;q=0.8', 14], ['GB', 'en-GB,en;q=0.9', 10], ['FR', 'fr-FR,fr;q=0.9', 7],
  ['IN', 'en-IN,en;q=0.9', 7], ['BR', 'pt-BR,pt;q=0.9', 5], ['CA', 'en-CA,en;q=0.9', 5], ['NL', 'nl-NL,nl;q=0.9', 4], ['JP', 'ja-JP,ja;q=0.9', 4],
  ['ES', 'es-ES,es;q=0.9', 4], ['AU', 'en-AU,en;q=0.9', 3], ['SE', 'sv-SE,sv;q=0.9', 2], ['PL', 'pl-PL,pl;q=0.9', 2], ['IT', 'it-IT,it;q=0.9', 3],
];
const WIDTHS = [390, 414, 430, 820, 1024, 1280, 1440, 1536, 1920, 2560];
const OUTBOUND = ['https://github.com/footfall/footfall', 'https://x.com/footfall', 'https://discord.gg/footfall', 'https://aws.amazon.com/cdk/'];
/** Weekday traffic factors, Sunday first. */
const WEEKDAY = [0.6, 1.1, 1.15, 1.1, 1.05, 0.95, 0.65];

function weighted<T>(items: ReadonlyArray<T>, weight: (t: T) => number, random: () => number): T {
  const total = items.reduce((s, t) => s + weight(t), 0);
  let r = random() * total;
  for (const t of items) if ((r -= weight(t)) < 0) return t;
  return items[items.length - 1] as T;
}

const hex = (random: () => number, n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');

/** One visit of the demo, as the generator planned it. */
export interface DemoVisit {
  visitor: string | null;
  ip: string;
  start: number;
  end: number;
  channel: string;
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

/** Generates the demo (deterministic for the same options). */
export function generateDemo(options: DemoOptions): DemoData {
  const random = rng(options.seed ?? 20261121);
  const agents = browserUserAgents();
  const start = Math.floor(options.now / DAY) * DAY - (options.days - 1) * DAY;
  const visitors: Array<{ id: string; ip: string; ua: string; country: [string, string, number]; width: number }> = [];
  const lines: Array<{ ts: number; line: string }> = [];
  const visits: DemoVisit[] = [];
  const purchases: Array<{ at: number; visitor: string | null; channel: string }> = [];

  for (let d = 0; d < options.days; d++) {
    const dayStart = start + d * DAY;
    const growth = 0.7 + (0.6 * d) / Math.max(1, options.days - 1);
    const count = Math.round(options.visitsPerDay * (WEEKDAY[new Date(dayStart).getUTCDay()] ?? 1) * growth * (0.85 + random() * 0.3));
    for (let i = 0; i < count; i++) {
      // Traffic peaks in the (European and American) afternoon.
      const at = dayStart + Math.floor((6 + random() * 16 + random() * 2) * 3_600_000);
      if (at > options.now) continue;
      const returning = visitors.length > 20 && random() < 0.3;
      const who = returning
        ? (visitors[Math.floor(random() * visitors.length)] as (typeof visitors)[number])
        : {
            id: random() < 0.05 ? '' : `demo-${hex(random, 16)}`,
            ip: `198.51.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
            ua: zipf(agents, random),
            country: weighted(COUNTRIES, (c) => c[2], random),
            width: zipf(WIDTHS.slice().reverse(), random),
          };
      if (!returning) visitors.push(who);
      const channel = weighted(CHANNELS, (c) => c.weight, random);
      const campaign = zipf(CAMPAIGNS, random);
      const landing = zipf(PAGES, random);
      const query = channel.utm ? `?${channel.utm}${campaign}${channel.name === 'Paid' ? `&gclid=${hex(random, 12)}` : ''}` : '';
      const referrer = channel.referrers ? zipf(channel.referrers, random) : null;
      const pages = [landing, ...Array.from({ length: Math.floor(random() * random() * 6) }, () => zipf(PAGES, random))];
      let t = at;
      const base = { s: options.site, ua: who.ua, ip: who.ip, country: who.country[0], language: who.country[1], w: who.width, ...(who.id ? { v: who.id } : {}) };
      const push = (o: Record<string, unknown>) => lines.push({ ts: t, line: JSON.stringify({ ...base, ...o, ts: new Date(t).toISOString() }) });
      pages.forEach((path, p) => {
        push({ n: 'pageview', u: `https://${options.site}${path}${p === 0 ? query : ''}`, r: p === 0 ? referrer : `https://${options.site}${pages[p - 1]}` });
        if (random() < 0.04) push({ n: 'goal', g: 'Signup', u: `https://${options.site}${path}` });
        t += Math.floor(20_000 + random() * 160_000);
      });
      if (random() < 0.08) push({ n: 'goal', g: 'Outbound Link: Click', l: zipf(OUTBOUND, random), u: `https://${options.site}${pages[pages.length - 1]}` });
      visits.push({ visitor: who.id || null, ip: who.ip, start: at, end: t, channel: channel.name });
      if (random() < channel.buy && t + 2 * MIN <= options.now) purchases.push({ at: t + 2 * MIN, visitor: who.id || null, channel: channel.name });
    }
  }
  lines.sort((a, b) => a.ts - b.ts);
  return { events: lines.map((l) => l.line), visits, webhooks: stripeWebhooks(purchases, options.now, random) };
}

/** Stripe events for the purchases: checkouts, first invoices, renewals, cancellations, refunds, failures. */
function stripeWebhooks(purchases: Array<{ at: number; visitor: string | null }>, now: number, random: () => number): DemoWebhook[] {
  const events: DemoWebhook[] = [];
  let n = 0;
  const id = (prefix: string) => `${prefix}_demo${(++n).toString(36).padStart(8, '0')}${hex(random, 6)}`;
  const push = (type: string, at: number, object: Record<string, unknown>) => events.push({ id: id('evt'), type, created: Math.floor(at / 1000), object });
  for (const p of purchases) {
    // Some checkouts never got the visitor id into their metadata: Unattributed.
    const metadata = p.visitor && random() > 0.1 ? { footfall_visitor_id: p.visitor } : {};
    const customer = id('cus');
    const eur = random() < 0.3;
    const currency = eur ? 'eur' : 'usd';
    if (random() < 0.03) {
      push('payment_intent.payment_failed', p.at, { id: id('pi'), object: 'payment_intent', amount: eur ? 9900 : 9900, currency, customer, metadata, latest_charge: null });
      continue;
    }
    if (random() < 0.6) {
      const amount = eur ? 2500 : 2900;
      const subscription = id('sub');
      const invoice = id('in');
      const pi = id('pi');
      push('checkout.session.completed', p.at, { id: id('cs'), object: 'checkout.session', mode: 'subscription', payment_status: 'paid', amount_total: amount, currency, payment_intent: null, invoice, subscription, customer, metadata });
      push('customer.subscription.created', p.at, { id: subscription, object: 'subscription', status: 'active', customer, metadata });
      push('invoice.paid', p.at, { id: invoice, object: 'invoice', amount_paid: amount, currency, billing_reason: 'subscription_create', customer, metadata: {}, payment_intent: pi, charge: id('ch'), subscription, status_transitions: { paid_at: Math.floor(p.at / 1000) } });
      let at = p.at + 30 * DAY;
      for (; at <= now; at += 30 * DAY) {
        if (random() < 0.12) break;
        const renewal = id('in');
        push('invoice.paid', at, { id: renewal, object: 'invoice', amount_paid: amount, currency, billing_reason: 'subscription_cycle', customer, metadata: {}, payment_intent: id('pi'), charge: id('ch'), subscription, status_transitions: { paid_at: Math.floor(at / 1000) } });
      }
      if (at <= now) push('customer.subscription.deleted', at, { id: subscription, object: 'subscription', status: 'canceled', customer, metadata });
      continue;
    }
    const amount = eur ? 8900 : 9900;
    const pi = id('pi');
    const charge = id('ch');
    push('checkout.session.completed', p.at, { id: id('cs'), object: 'checkout.session', mode: 'payment', payment_status: 'paid', amount_total: amount, currency, payment_intent: pi, invoice: null, subscription: null, customer, metadata });
    if (random() < 0.06) {
      const partial = random() < 0.5;
      const refundAt = Math.min(now, p.at + Math.floor(random() * 10) * DAY + DAY);
      push('charge.refunded', refundAt, { id: charge, object: 'charge', amount, amount_refunded: partial ? Math.round(amount / 2) : amount, currency, refunded: !partial, payment_intent: pi, customer, metadata: {} });
    }
  }
  return events.sort((a, b) => a.created - b.created);
}
