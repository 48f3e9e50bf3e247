/**
 * The tracking script (/v.js) in a real headless Chromium: exact payloads for
 * page views, SPA navigations, goals and outbound links; silence rules; the
 * visitor id; and that nothing ever throws into the page.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { buildTrackerSync, trackerSizes } from '../../tracker/build.js';
import { launchChromium, settle, startHarness, type Harness, type TrackerEvent } from './harness.js';

/** The page's view of the tracker global (used inside page.evaluate callbacks). */
type FootfallWindow = Window & {
  footfall: ((command?: unknown, name?: unknown, options?: unknown) => void) & { visitorId(): string; q?: unknown };
};

// Screen and viewport differ on purpose: `w` must be the screen width.
const SCREEN = { width: 1440, height: 900 };
const VIEWPORT = { width: 1280, height: 800 };
const VID = /^[A-Za-z0-9-]{22,64}$/;
const YEAR_S = 365 * 24 * 3600;

let harness: Harness;
let browser: Browser;
let context: BrowserContext | undefined;
let pageErrors: string[] = [];

beforeAll(async () => {
  harness = await startHarness();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await harness?.close();
});

beforeEach(() => {
  harness.reset();
  pageErrors = [];
});

afterEach(async () => {
  // Whatever a test did, the tracker must not have thrown into any page.
  expect(pageErrors).toEqual([]);
  await context?.close();
  context = undefined;
});

interface PageOptions {
  /** Force navigator.webdriver to false, as in a real visitor's browser. */
  webdriver?: false;
  /** Script run in every document (about:blank included) before the page's own scripts. */
  init?: () => unknown;
  contextOptions?: BrowserContextOptions;
}

async function newPage(options: PageOptions = {}): Promise<Page> {
  context = await browser.newContext({ viewport: VIEWPORT, screen: SCREEN, ...options.contextOptions });
  if (options.webdriver === false) {
    await context.addInitScript(() => Object.defineProperty(navigator, 'webdriver', { get: () => false }));
  }
  if (options.init) await context.addInitScript(options.init);
  context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${String(e)}`)));
  return context.newPage();
}

/** Opens a fixture (`/name.html`) on `host` (default example.test) in a fresh context. */
async function open(path: string, options: PageOptions & { host?: string; referer?: string } = {}): Promise<Page> {
  const page = await newPage(options);
  await page.goto(harness.origin(options.host) + path, options.referer ? { referer: options.referer } : {});
  return page;
}

function visitorId(page: Page): Promise<string> {
  return page.evaluate(() => (window as unknown as FootfallWindow).footfall.visitorId());
}

function call(page: Page, command: unknown, name?: unknown, options?: unknown): Promise<void> {
  return page.evaluate(([c, n, o]) => (window as unknown as FootfallWindow).footfall(c, n, o), [
    command,
    name,
    options,
  ] as const);
}

/** The fields every event of this page carries, for exact comparisons. */
async function base(page: Page, path: string, extra: Partial<TrackerEvent> = {}): Promise<TrackerEvent> {
  return {
    n: 'pageview',
    u: harness.origin() + path,
    s: 'example.com',
    r: null,
    v: await visitorId(page),
    w: SCREEN.width,
    ...extra,
  };
}

/** Waits for exactly `count` events: the count is reached, then nothing more arrives. */
async function exactly(count: number): Promise<TrackerEvent[]> {
  await harness.waitForEvents(count);
  await settle(400);
  expect(harness.events).toHaveLength(count);
  return harness.events;
}

describe('build', () => {
  it('fits the 1,000-byte gzip budget', () => {
    const sizes = trackerSizes(buildTrackerSync());
    expect(sizes.gzip).toBeLessThanOrEqual(1000);
    expect(sizes.brotli).toBeLessThan(sizes.gzip);
    expect(sizes.raw).toBeGreaterThan(sizes.gzip);
  });
});

describe('page views', () => {
  it('sends one page view on load: exact payload, text/plain, keepalive fetch without preflight', async () => {
    const page = await open('/basic.html', {
      referer: 'https://news.ycombinator.com/',
      // Spy on fetch (passing through) to see the options the tracker uses.
      init: () => {
        const w = window as unknown as { fetch: typeof fetch; fetchCalls: unknown[] };
        const real = w.fetch;
        w.fetchCalls = [];
        w.fetch = (input, init) => {
          w.fetchCalls.push({
            url: String(input),
            method: init?.method,
            keepalive: init?.keepalive,
            body: typeof init?.body,
            headers: init?.headers,
          });
          return real(input, init);
        };
      },
    });
    const [event] = await exactly(1);
    expect(await page.evaluate(() => (window as unknown as { fetchCalls: unknown[] }).fetchCalls)).toEqual([
      { url: `${harness.origin()}/api/event`, method: 'POST', keepalive: true, body: 'string', headers: undefined },
    ]);
    expect(event).toEqual(await base(page, '/basic.html', { r: 'https://news.ycombinator.com/' }));
    expect(event?.v).toMatch(VID);
    expect(harness.requests.map((r) => r.method)).toEqual(['POST']);
    expect(harness.requests[0]?.host).toBe(`example.test:${harness.port}`);
    expect(harness.requests[0]?.contentType).toMatch(/^text\/plain/);
  });

  it('defaults the site to location.hostname and r to null', async () => {
    const page = await open('/nosite.html');
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/nosite.html', { s: 'example.test', r: null }));
  });

  it('sends the previous page as referrer after an internal link', async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    await page.click('#internal');
    await page.waitForURL(/goals\.html$/);
    const events = await exactly(2);
    expect(events[1]).toEqual(await base(page, '/goals.html', { r: harness.origin() + '/basic.html' }));
  });

  it('posts to data-api on another origin, still without a CORS preflight', async () => {
    const page = await open('/api.html');
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/api.html'));
    expect(harness.requests.map((r) => `${r.method} ${r.host}`)).toEqual([`POST collector.test:${harness.port}`]);
    expect(harness.requests[0]?.contentType).toMatch(/^text\/plain/);
  });

  it('posts to the event URL the deployed script was served with (the event function URL in AWS), without a preflight; data-api still wins', async () => {
    const page = await open('/deployed.html');
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/deployed.html'));
    expect(harness.requests.map((r) => `${r.method} ${r.host}`)).toEqual([`POST collector.test:${harness.port}`]);
    expect(harness.requests[0]?.contentType).toMatch(/^text\/plain/);

    harness.reset();
    await open('/deployed-api.html');
    await exactly(1);
    expect(harness.requests.map((r) => `${r.method} ${r.host}`)).toEqual([`POST external.test:${harness.port}`]);
  });

  it('counts once when the script is included twice', async () => {
    const page = await open('/double.html');
    await harness.waitForEvents(1);
    await call(page, 'goal', 'marker');
    const events = await exactly(2);
    expect(events.map((e) => e.n)).toEqual(['pageview', 'goal']);
  });
});

describe('SPA navigation', () => {
  it('counts pushState, replaceState to a new path and popstate; not same-path changes', async () => {
    const page = await open('/spa.html');
    await harness.waitForEvents(1);
    const nav = (method: 'pushState' | 'replaceState', url: string) =>
      page.evaluate(([m, u]) => history[m](null, '', u), [method, url] as const);

    await nav('pushState', '/spa/two');
    await harness.waitForEvents(2);
    // Same path: a query change by pushState, replaceState with the same URL or only a new query.
    await nav('pushState', '/spa/two?tab=1');
    await nav('replaceState', '/spa/two?tab=1');
    await nav('replaceState', '/spa/two?tab=2');
    await nav('replaceState', '/spa/three');
    await harness.waitForEvents(3);
    await nav('pushState', '/spa/four');
    await harness.waitForEvents(4);
    await page.evaluate(() => history.back());
    await page.waitForURL(/\/spa\/three$/);

    const events = await exactly(5);
    expect(events).toEqual([
      await base(page, '/spa.html'),
      await base(page, '/spa/two'),
      await base(page, '/spa/three'),
      await base(page, '/spa/four'),
      await base(page, '/spa/three'),
    ]);
  });

  it('counts fragment changes in hash mode (data-hash)', async () => {
    const page = await open('/hash.html');
    await harness.waitForEvents(1);
    await page.click('#settings');
    await harness.waitForEvents(2);
    await page.evaluate(() => history.pushState(null, '', '#/billing'));
    await harness.waitForEvents(3);
    // Back fires both popstate and hashchange: one page view.
    await page.evaluate(() => history.back());
    const events = await exactly(4);
    expect(events).toEqual([
      await base(page, '/hash.html'),
      await base(page, '/hash.html#/settings'),
      await base(page, '/hash.html#/billing'),
      await base(page, '/hash.html#/settings'),
    ]);
  });

  it('ignores fragment changes without data-hash', async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    await page.click('#section-link');
    await page.waitForURL(/#section$/);
    await call(page, 'goal', 'marker');
    const events = await exactly(2);
    expect(events[1]).toEqual(await base(page, '/basic.html#section', { n: 'goal', g: 'marker' }));
  });
});

describe('goals', () => {
  it("sends footfall('goal', name)", async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    await call(page, 'goal', 'signup');
    const events = await exactly(2);
    expect(events[1]).toEqual(await base(page, '/basic.html', { n: 'goal', g: 'signup' }));
  });

  it("sends custom properties: footfall('Signup', {props}) as Plausible's API, and footfall('goal', name, {props})", async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    await call(page, 'Signup', { props: { plan: 'pro', seats: 3, __proto__: 'x' } });
    await harness.waitForEvents(2);
    await call(page, 'goal', 'Upgrade', { props: { plan: 'team' } });
    await harness.waitForEvents(3);
    await call(page, 'Plain');
    const events = await exactly(4);
    expect(events.slice(1)).toEqual([
      await base(page, '/basic.html', { n: 'goal', g: 'Signup', p: { plan: 'pro', seats: 3 } }),
      await base(page, '/basic.html', { n: 'goal', g: 'Upgrade', p: { plan: 'team' } }),
      await base(page, '/basic.html', { n: 'goal', g: 'Plain' }),
    ]);
  });

  it('sends data-footfall-goal clicks, from inner elements too and despite stopPropagation', async () => {
    const page = await open('/goals.html');
    await harness.waitForEvents(1);
    await page.click('#signup-label');
    await harness.waitForEvents(2);
    await page.click('#plain');
    await page.click('#card');
    await harness.waitForEvents(3);
    await page.click('#goal-link');
    await harness.waitForEvents(4);
    await page.click('#stopper');
    const events = await exactly(5);
    expect(events.slice(1)).toEqual([
      await base(page, '/goals.html', { n: 'goal', g: 'signup' }),
      await base(page, '/goals.html', { n: 'goal', g: 'Pricing card' }),
      // The goal link is a fragment link: the event is sent before the URL changes.
      await base(page, '/goals.html', { n: 'goal', g: 'See plans' }),
      await base(page, '/goals.html#plans', { n: 'goal', g: 'stopped' }),
    ]);
  });

  it('runs calls queued by the snippet before the script loaded, after the page view', async () => {
    const page = await open('/queued.html');
    const events = await exactly(3);
    const sorted = [...events].sort((a, b) => `${a.n}${a.g}`.localeCompare(`${b.n}${b.g}`));
    expect(sorted).toEqual([
      await base(page, '/queued.html', { n: 'goal', g: 'early' }),
      await base(page, '/queued.html', { n: 'goal', g: 'second' }),
      await base(page, '/queued.html'),
    ]);
    expect(await page.evaluate(() => typeof (window as unknown as FootfallWindow).footfall.visitorId)).toBe('function');
  });
});

describe('outbound links', () => {
  it('sends "Outbound Link: Click" with l, and the browser still navigates to the other site', async () => {
    const page = await open('/outbound.html');
    await harness.waitForEvents(1);
    const expected = await base(page, '/outbound.html', {
      n: 'goal',
      g: 'Outbound Link: Click',
      l: `${harness.origin('external.test')}/external.html?from=fixture`,
    });
    await page.click('#out');
    await page.waitForURL(`${harness.origin('external.test')}/external.html?from=fixture`);
    expect(await page.textContent('#external')).toBe('External site');
    const events = await exactly(2);
    expect(events[1]).toEqual(expected);
  });

  it('does not count internal or mailto links', async () => {
    const page = await open('/outbound.html');
    await harness.waitForEvents(1);
    // Keep the browser from handing mailto: to the OS; the tracker (capture phase) still sees the click.
    await page.evaluate(() => document.getElementById('mail')?.addEventListener('click', (e) => e.preventDefault()));
    await page.click('#mail');
    await page.click('#internal');
    await page.waitForURL(/basic\.html$/);
    const events = await exactly(2);
    expect(events.map((e) => [e.n, new URL(e.u).pathname])).toEqual([
      ['pageview', '/outbound.html'],
      ['pageview', '/basic.html'],
    ]);
  });

  it('counts a middle click (new tab), not a right click', async () => {
    const page = await open('/outbound.html');
    await harness.waitForEvents(1);
    await page.click('#out', { button: 'right' });
    await page.click('#out', { button: 'middle' });
    const events = await exactly(2);
    expect(events[1]).toEqual(
      await base(page, '/outbound.html', {
        n: 'goal',
        g: 'Outbound Link: Click',
        l: `${harness.origin('external.test')}/external.html?from=fixture`,
      }),
    );
    expect(page.url()).toBe(`${harness.origin()}/outbound.html`);
  });

  it('sends both the goal and the outbound click for an outbound link with data-footfall-goal', async () => {
    const page = await open('/outbound.html');
    await harness.waitForEvents(1);
    const common = await base(page, '/outbound.html', { n: 'goal' });
    await page.click('#signup-out');
    await page.waitForURL(/external\.test/);
    const events = await exactly(3);
    const goals = events.slice(1).sort((a, b) => String(a.g).localeCompare(String(b.g)));
    expect(goals).toEqual([
      { ...common, g: 'Outbound Link: Click', l: `${harness.origin('external.test')}/external.html` },
      { ...common, g: 'Partner signup' },
    ]);
  });
});

describe('silence and opt-out', () => {
  async function expectSilent(page: Page): Promise<void> {
    // The script did load and run; it just sends nothing, goals included.
    expect(await page.evaluate(() => typeof (window as unknown as FootfallWindow).footfall.visitorId)).toBe('function');
    await call(page, 'goal', 'ignored');
    await settle(600);
    expect(harness.scriptLoads).toBeGreaterThan(0);
    expect(harness.events).toEqual([]);
  }

  it('is silent on 127.0.0.1 and localhost without data-allow-local', async () => {
    await expectSilent(await open('/silent.html', { host: '127.0.0.1', webdriver: false }));
    await context?.close();
    await expectSilent(await open('/silent.html', { host: 'localhost', webdriver: false }));
  });

  it('is silent under navigator.webdriver on a real host, and sends without it', async () => {
    await expectSilent(await open('/silent.html'));
    await context?.close();
    const page = await open('/silent.html', { webdriver: false });
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/silent.html'));
  });

  it('is silent on file: pages unless data-allow-local is present', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'footfall-file-'));
    try {
      const page = (allow: string) =>
        `<!doctype html><title>file</title><script defer src="${harness.origin()}/v.js" data-site="example.com"${allow}></script>`;
      writeFileSync(join(dir, 'silent.html'), page(''));
      writeFileSync(join(dir, 'allowed.html'), page(' data-allow-local'));
      const silent = await newPage({ webdriver: false });
      await silent.goto(pathToFileURL(join(dir, 'silent.html')).href);
      await expectSilent(silent);
      const allowed = await newPage({ webdriver: false });
      await allowed.goto(pathToFileURL(join(dir, 'allowed.html')).href);
      const [event] = await exactly(1);
      expect(event).toMatchObject({
        n: 'pageview',
        u: pathToFileURL(join(dir, 'allowed.html')).href,
        s: 'example.com',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('data-allow-local overrides both the localhost and the webdriver checks', async () => {
    const page = await open('/basic.html', { host: '127.0.0.1' });
    expect(await page.evaluate(() => navigator.webdriver)).toBe(true);
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/basic.html', { u: `http://127.0.0.1:${harness.port}/basic.html` }));
  });

  it("honours localStorage.footfall_ignore === 'true', read on every event", async () => {
    const page = await open('/goals.html', {
      // Init scripts also run on about:blank, where storage is off limits.
      init: () => location.protocol === 'http:' && localStorage.setItem('footfall_ignore', 'true'),
    });
    await call(page, 'goal', 'ignored');
    await page.click('#signup');
    await settle(600);
    expect(harness.events).toEqual([]);
    await page.evaluate(() => localStorage.removeItem('footfall_ignore'));
    await call(page, 'goal', 'counted');
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/goals.html', { n: 'goal', g: 'counted' }));
  });
});

describe('visitor id', () => {
  it('is created once and equal in the payload, localStorage, the cookie and footfall.visitorId()', async () => {
    const page = await open('/basic.html');
    const [first] = await exactly(1);
    const id = await visitorId(page);
    expect(id).toMatch(VID);
    expect(first?.v).toBe(id);
    expect(await page.evaluate(() => localStorage.getItem('footfall_vid'))).toBe(id);
    expect(await page.evaluate(() => document.cookie)).toContain(`footfall_vid=${id}`);
    const cookie = (await context!.cookies()).find((c) => c.name === 'footfall_vid');
    expect(cookie).toMatchObject({ value: id, domain: 'example.test', path: '/', sameSite: 'Lax', httpOnly: false });
    expect(cookie!.expires).toBeGreaterThan(Date.now() / 1000 + YEAR_S - 120);
    expect(cookie!.expires).toBeLessThan(Date.now() / 1000 + YEAR_S + 120);

    await page.reload();
    const events = await exactly(2);
    expect(events[1]?.v).toBe(id);
    expect(await visitorId(page)).toBe(id);
  });

  it('is read back from either store when the other was cleared', async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    const id = await visitorId(page);

    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await harness.waitForEvents(2);
    expect(harness.events[1]?.v).toBe(id);
    expect(await page.evaluate(() => localStorage.getItem('footfall_vid'))).toBe(id);

    await context!.clearCookies();
    await page.reload();
    await harness.waitForEvents(3);
    expect(harness.events[2]?.v).toBe(id);
    expect((await context!.cookies()).find((c) => c.name === 'footfall_vid')?.value).toBe(id);

    // A fresh profile is a new visitor.
    await context!.close();
    const other = await open('/basic.html');
    await harness.waitForEvents(4);
    expect(harness.events[3]?.v).toBe(await visitorId(other));
    expect(harness.events[3]?.v).not.toBe(id);
  });

  it('replaces an invalid stored id', async () => {
    const page = await open('/basic.html', {
      init: () => {
        if (location.protocol === 'http:' && !sessionStorage.getItem('seeded')) {
          sessionStorage.setItem('seeded', '1');
          localStorage.setItem('footfall_vid', 'bad id!');
        }
      },
    });
    const [event] = await exactly(1);
    expect(event?.v).toMatch(VID);
    expect(await page.evaluate(() => localStorage.getItem('footfall_vid'))).toBe(event?.v);
  });
});

describe('never throws into the page', () => {
  it('keeps tracking with an in-memory id when localStorage and cookies throw', async () => {
    const page = await open('/spa.html', {
      init: () => {
        const deny = () => {
          throw new DOMException('storage blocked by the test', 'SecurityError');
        };
        Object.defineProperty(window, 'localStorage', { get: deny, configurable: true });
        Object.defineProperty(Document.prototype, 'cookie', { get: deny, set: deny, configurable: true });
      },
    });
    expect(
      await page.evaluate(() => {
        try {
          return typeof localStorage;
        } catch {
          return 'blocked';
        }
      }),
    ).toBe('blocked');
    await harness.waitForEvents(1);
    await page.evaluate(() => history.pushState(null, '', '/spa/next'));
    await harness.waitForEvents(2);
    await call(page, 'goal', 'signup');
    const events = await exactly(3);
    expect(events).toEqual([
      await base(page, '/spa.html'),
      await base(page, '/spa/next'),
      await base(page, '/spa/next', { n: 'goal', g: 'signup' }),
    ]);
    expect(events[0]?.v).toMatch(VID);
  });

  it('falls back to sendBeacon when fetch throws', async () => {
    const page = await open('/basic.html', {
      init: () => {
        window.fetch = () => {
          throw new TypeError('fetch blocked by the test');
        };
      },
    });
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/basic.html'));
    expect(harness.requests[0]?.contentType).toMatch(/^text\/plain/);
  });

  it('falls back to sendBeacon when fetch rejects, without an unhandled rejection', async () => {
    const page = await open('/basic.html', {
      init: () => {
        window.fetch = () => Promise.reject(new TypeError('offline (test)'));
      },
    });
    const [event] = await exactly(1);
    expect(event).toEqual(await base(page, '/basic.html'));
  });

  it('stays quiet with no fetch and a throwing sendBeacon, and with odd arguments', async () => {
    const page = await open('/goals.html', {
      init: () => {
        (window as { fetch?: unknown }).fetch = undefined;
        navigator.sendBeacon = () => {
          throw new Error('beacon blocked by the test');
        };
      },
    });
    const result = await page.evaluate(() => {
      const ff = (window as unknown as FootfallWindow).footfall;
      ff();
      ff('goal');
      ff('goal', '');
      ff('unknown', 'x');
      ff('goal', {
        toString: () => {
          throw new Error('boom');
        },
      });
      ff('goal', Symbol('s'));
      document.getElementById('signup')?.click();
      history.pushState(null, '', '/elsewhere');
      return 'ok';
    });
    expect(result).toBe('ok');
    await settle(400);
    expect(harness.events).toEqual([]);
  });

  it("lets the page's own errors through and ignores clicks on non-elements", async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    const name = await page.evaluate(() => {
      document.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      try {
        history.pushState(null, '', 'http://other.test/');
        return 'no error';
      } catch (e) {
        return (e as Error).name;
      }
    });
    expect(name).toBe('SecurityError');
    await call(page, 'goal', 42);
    const events = await exactly(2);
    expect(events[1]).toEqual(await base(page, '/basic.html', { n: 'goal', g: '42' }));
  });
});

describe('screenshot', () => {
  it('renders the basic fixture to /tmp/tracker.png', async () => {
    const page = await open('/basic.html');
    await harness.waitForEvents(1);
    await page.waitForFunction(() => document.getElementById('vid')?.textContent !== '(loading)');
    await page.screenshot({ path: '/tmp/tracker.png' });
    expect(await page.textContent('#vid')).toBe(await visitorId(page));
  });
});
