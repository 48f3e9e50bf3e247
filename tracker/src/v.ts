/**
 * Footfall tracker, served at `GET /v.js` (see docs/tracking.md).
 *
 * Install: `<script defer src="https://HOST/v.js" data-site="example.com"></script>`.
 * Attributes on the script tag:
 *   data-site         site domain sent as `s` (default: location.hostname)
 *   data-api          event endpoint (default: the script's origin + /api/event)
 *   data-hash         count `#fragment` changes as page views (hash routers)
 *   data-allow-local  also send from localhost, file: and automated browsers
 *
 * Built by tracker/build.ts into an IIFE, so nothing here leaks into the page
 * except the `footfall` global. Size budget: 1,000 bytes gzipped, which is why
 * the code favours short, flat constructs over abstractions.
 */

/** The `footfall` global: a command function plus the visitor id getter. */
interface Footfall {
  (command?: unknown, name?: unknown, options?: unknown): void;
  /** Calls made by the snippet before this script loaded. */
  q?: ArrayLike<unknown>[];
  visitorId?: () => string;
}

type FootfallWindow = Window & { footfall?: Footfall };

const VID = 'footfall_vid';
const win = window as FootfallWindow;
const doc = document;
const loc = location;
const nav = navigator;

/**
 * Runs `f` and returns its result, or undefined if it threw. The tracker must
 * never throw into the page: storage access alone throws a SecurityError when
 * the browser blocks it, and a page may replace fetch or sendBeacon.
 */
function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    /* swallowed on purpose */
  }
}

function init(): void {
  // currentScript covers defer, async and injected (tag manager) classic scripts.
  const script = doc.currentScript as HTMLScriptElement;
  const attr = (name: string) => script.getAttribute('data-' + name);
  const site = attr('site') || loc.hostname;
  const api = attr('api') || new URL('/api/event', script.src);
  const hashMode = attr('hash') != null;
  // Local development and automated browsers would pollute real numbers.
  const silent =
    attr('allow-local') == null &&
    (/^(localhost|127\.0\.0\.1|\[::1\])$/.test(loc.hostname) || loc.protocol == 'file:' || nav.webdriver);
  // Visitor id: read back from localStorage or the cookie, or made anew, then stored in both.
  // No cookie match throws on the `!` and yields undefined.
  let vid = safe(() => localStorage.getItem(VID)) || safe(() => /footfall_vid=([^;]*)/.exec(doc.cookie)![1]) || '';
  // Anything not valid per spec (8–64 of [A-Za-z0-9-]) is replaced.
  if (!/^[A-Za-z0-9-]{8,64}$/.test(vid)) {
    // 22 random bytes, each as 1–2 base-36 digits: 22–44 of [0-9a-z], inside the spec's 8–64.
    vid = '';
    for (const b of crypto.getRandomValues(new Uint8Array(22))) vid += b.toString(36);
  }
  // Write both on every load: restores whichever one was cleared, and keeps the
  // cookie (readable by the site's own server at checkout) a rolling year long.
  // With both blocked the id still lives for this page and its SPA navigations.
  safe(() => localStorage.setItem(VID, vid));
  safe(() => (doc.cookie = VID + '=' + vid + ';max-age=31536000;path=/;samesite=lax'));
  let lastPage: string | undefined;

  const send = (n: string, g?: string, l?: string, p?: unknown): void => {
    // The opt-out is read on each event so it applies without a reload.
    if (silent || safe(() => localStorage.footfall_ignore) == 'true') return;
    // Custom properties go as sent: the server keeps them by Plausible's rules (docs/tracking.md).
    const body = JSON.stringify({ n, u: loc.href, s: site, r: doc.referrer || null, v: vid, w: screen.width, g, l, p });
    const beacon = () => safe(() => nav.sendBeacon(api, body));
    // A string body is sent as text/plain, which needs no CORS preflight;
    // keepalive lets the request outlive the page (outbound link clicks).
    // sendBeacon takes over when fetch is missing, throws or rejects.
    if (!safe(() => fetch(api, { method: 'POST', body, keepalive: true }).catch(beacon))) beacon();
  };

  const page = (): void => {
    // Only a new path is a new page: query-only changes and same-path
    // replaceState calls are not. In hash mode the fragment is part of the path.
    const key = loc.pathname + (hashMode ? loc.hash : '');
    if (key != lastPage) {
      lastPage = key;
      send('pageview');
    }
  };

  const click = (e: MouseEvent): void => {
    // auxclick also fires for the right button (2); only the middle one (1) opens a link.
    if (e.button > 1) return;
    safe(() => {
      const target = e.target as Element;
      const goal = target.closest('[data-footfall-goal]');
      const name = goal && goal.getAttribute('data-footfall-goal');
      if (name) send('goal', name);
      const link = target.closest('a[href]') as HTMLAnchorElement | null;
      // No preventDefault: the browser navigates as usual and keepalive carries the event.
      // mailto:, tel: and javascript: links have an empty host and are not outbound.
      if (link && link.host && link.host != loc.host) send('goal', 'Outbound Link: Click', link.href);
    });
  };

  // footfall('Signup', {props}) as Plausible's plausible(...), and the older footfall('goal', 'Signup', {props}).
  const footfall: Footfall = (command, name, options) =>
    safe(() => {
      if (command == 'goal') {
        command = name;
        name = options;
      }
      if (command) send('goal', '' + command, undefined, name && (name as { props?: unknown }).props);
    });
  footfall.visitorId = () => vid;
  win.footfall = footfall;

  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method];
    // The page's own call runs first and keeps its result and its exceptions.
    history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
      const result = original.apply(this, args);
      page();
      return result;
    };
  }
  addEventListener('popstate', page);
  if (hashMode) addEventListener('hashchange', page);
  // Capture phase: a page that stops propagation of its clicks still gets counted.
  for (const type of ['click', 'auxclick']) doc.addEventListener(type, click as EventListener, true);

  page();
  // Calls queued by the snippet run after the first page view, in their order.
  for (const args of previous.q || []) footfall(...(args as unknown[]));
}

// The snippet's stand-in, if any. A second copy of the script on the same page
// finds the real one (with visitorId) and stays out, so nothing counts twice.
const previous: Partial<Footfall> = win.footfall || {};
if (!previous.visitorId) safe(init);

export {};
