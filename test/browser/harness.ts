/**
 * Test harness for the tracker's browser tests: a small HTTP server on
 * 127.0.0.1 that serves the HTML fixtures, the freshly built `/v.js`, and
 * records every request to `/api/event`; plus a headless Chromium launcher
 * that maps a few `.test` hostnames onto that server.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser } from 'playwright-core';
import { buildTrackerSync } from '../../tracker/build.js';
import { withEventEndpoint } from '../../lambdas/handlers/tracker-script.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** One event as the tracker sends it (`docs/ingestion.md` "The event's fields", plus the outbound link `l`). */
export interface TrackerEvent {
  n: string;
  u: string;
  s: string;
  r: string | null;
  v: string | null;
  w: number;
  g?: string;
  l?: string;
  /** Custom properties, as the page passed them. */
  p?: Record<string, unknown>;
}

/** One request the harness saw on /api/event (any method). */
export interface RecordedRequest {
  method: string;
  host: string;
  contentType: string;
  body: string;
}

/** A running harness server. */
export interface Harness {
  port: number;
  /** Parsed bodies of every POST /api/event, in arrival order. */
  events: TrackerEvent[];
  /** Every request to /api/event, preflights included. */
  requests: RecordedRequest[];
  /** Requests for /v.js, to prove the script was loaded on silent pages. */
  scriptLoads: number;
  /** `http://{host}:{port}` for a hostname the browser maps to this server. */
  origin(host?: string): string;
  /** Forgets recorded events and requests. */
  reset(): void;
  /** Resolves once at least `count` events arrived; rejects with what did arrive after `timeoutMs`. */
  waitForEvents(count: number, timeoutMs?: number): Promise<TrackerEvent[]>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

/** Starts the harness server on 127.0.0.1 with an ephemeral port. */
export async function startHarness(): Promise<Harness> {
  // Built once per run from source, exactly as the server will serve it.
  const script = buildTrackerSync();
  const state = { events: [] as TrackerEvent[], requests: [] as RecordedRequest[], scriptLoads: 0 };
  let port = 0;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://harness');
      if (url.pathname === '/api/event') {
        const body = await readBody(req);
        state.requests.push({
          method: req.method ?? '',
          host: req.headers.host ?? '',
          contentType: req.headers['content-type'] ?? '',
          body,
        });
        const cors = { 'Access-Control-Allow-Origin': '*' };
        if (req.method === 'OPTIONS') {
          res.writeHead(204, {
            ...cors,
            'Access-Control-Allow-Methods': 'POST',
            'Access-Control-Allow-Headers': 'Content-Type',
          });
        } else {
          state.events.push(JSON.parse(body) as TrackerEvent);
          res.writeHead(202, cors);
        }
        res.end();
        return;
      }
      // /v-deployed.js: the script as the deployed tracker function serves it, its default endpoint
      // another origin's (the event function URL's in AWS; collector.test here).
      if (url.pathname === '/v.js' || url.pathname === '/v-deployed.js') {
        state.scriptLoads++;
        res.writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(
          url.pathname === '/v.js' ? script : withEventEndpoint(script, `http://collector.test:${port}/api/event`),
        );
        return;
      }
      // Fixtures: /name.html, and any History API path under a fixture falls back to a 404 (never reloaded).
      const name = url.pathname.slice(1);
      if (/^[a-z-]+\.html$/.test(name)) {
        try {
          const html = readFileSync(resolve(fixtures, name), 'utf8').replaceAll('{{PORT}}', String(port));
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
          res.end(html);
          return;
        } catch {
          // fall through to 404
        }
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });

  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('harness: no port');
  port = address.port;

  return {
    port,
    get events() {
      return state.events;
    },
    get requests() {
      return state.requests;
    },
    get scriptLoads() {
      return state.scriptLoads;
    },
    origin: (host = 'example.test') => `http://${host}:${port}`,
    reset() {
      state.events = [];
      state.requests = [];
      state.scriptLoads = 0;
    },
    async waitForEvents(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (state.events.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} events, got ${state.events.length}: ${JSON.stringify(state.events)}`);
        }
        await sleep(20);
      }
      return state.events;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Hostnames Chromium resolves to 127.0.0.1, so pages can run on a "real", non-local host. */
export const TEST_HOSTS = ['example.test', 'external.test', 'collector.test'];

/** Chromium flags for these tests (the `.ci/run` image installs Debian's chromium at /usr/bin/chromium). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=${TEST_HOSTS.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`,
];

/** Launches headless Chromium (override the binary with CHROMIUM_PATH). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** Waits a fixed time: used only to assert that nothing (more) arrives. */
export function settle(ms = 600): Promise<void> {
  return sleep(ms);
}
