import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** A small deterministic PRNG (mulberry32), so every run measures the same workload. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from `items` with a Zipf-like skew: a few values very often, a long tail rarely. */
export function zipf<T>(items: readonly T[], random: () => number): T {
  const index = Math.floor(items.length * random() ** 3);
  return items[Math.min(index, items.length - 1)] as T;
}

/** Real browser User-Agents (isbot's fixtures, copied in test/fixtures). */
export function browserUserAgents(): string[] {
  const file = fileURLToPath(new URL('../../test/fixtures/user-agents/browsers.yml', import.meta.url));
  const byBrowser = parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
  return Object.values(byBrowser).flat();
}

/** Referrers in a realistic mix: search, AI, communities, social, email, long-tail blogs. */
export const REFERRERS = [
  'https://www.google.com/',
  'https://www.google.co.uk/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://chatgpt.com/',
  'https://www.perplexity.ai/',
  'https://news.ycombinator.com/item?id=4123',
  'https://www.reddit.com/r/SaaS/comments/abc',
  'https://t.co/xyz',
  'https://www.linkedin.com/feed/',
  'https://l.facebook.com/l.php',
  'android-app://com.google.android.gm',
  'https://www.producthunt.com/posts/footfall',
  'https://github.com/footfall/footfall',
  'https://www.youtube.com/',
  ...Array.from({ length: 40 }, (_, i) => `https://blog${i}.example.net/post/${i}`),
];
