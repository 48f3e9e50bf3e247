import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { startTestService } from '../support/local.js';
import { launchChromium } from './harness.js';

/** A desktop Chrome: headless Chromium's own agent says HeadlessChrome, which is (rightly) a bot. */
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

function page(title: string, scriptSrc: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<script defer src="${scriptSrc}" data-site="example.test" data-allow-local></script></head>
<body><h1>${title}</h1><button id="signup" data-footfall-goal="Signup">Sign up</button>
<a id="pricing" href="/pricing">Pricing</a> <a id="out" href="http://external.test:1/">GitHub</a></body></html>`;
}

describe('tracker → local service → timeline, in Chromium', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let site: Server;
  let browser: Browser;
  let key = '';
  let origin = '';

  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.test', timezone: 'UTC' }], { app: true });
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'e2e', new Date())).key;
    const script = `${svc.url.replace('127.0.0.1', 'collector.test')}/v.js`;
    site = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page(req.url === '/pricing' ? 'Pricing' : 'Home', script));
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
    origin = `http://example.test:${(site.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => site.close(() => r()));
    await svc.cleanup();
  });

  it("shows the page views and the goal in the visitor's timeline from /api/v1", async () => {
    const context = await browser.newContext({ userAgent: CHROME, viewport: { width: 1280, height: 800 } });
    const tab = await context.newPage();
    await tab.goto(`${origin}/`);
    await tab.waitForFunction(
      () => typeof (window as unknown as { footfall?: { visitorId?: unknown } }).footfall?.visitorId === 'function',
    );
    const visitor = await tab.evaluate(() =>
      (window as unknown as { footfall: { visitorId(): string } }).footfall.visitorId(),
    );
    await tab.click('#signup');
    await Promise.all([tab.waitForURL(`${origin}/pricing`), tab.click('#pricing')]);
    await tab.waitForLoadState('load');
    await tab.screenshot({ path: '/tmp/e2e-pricing.png' });
    // Let the keepalive requests land, then sessionize now instead of waiting for the timer.
    let timeline:
      { entries: Array<{ type: string; steps?: Array<{ type: string; path?: string; name?: string }> }> } | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      await svc.sessionize();
      const res = await fetch(`${svc.url}/api/v1/sites/example.test/visitors/${visitor}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      if (res.status === 200) {
        timeline = await res.json();
        if ((timeline?.entries[0]?.steps?.length ?? 0) >= 3) break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(timeline?.entries).toHaveLength(1);
    expect(timeline?.entries[0]).toMatchObject({ type: 'visit', channel: 'Direct', pageviews: 2 });
    expect(timeline?.entries[0]?.steps?.map((s) => [s.type, s.path ?? s.name])).toEqual([
      ['page', '/'],
      ['goal', 'Signup'],
      ['page', '/pricing'],
    ]);
    await context.close();
  }, 120_000);
});
