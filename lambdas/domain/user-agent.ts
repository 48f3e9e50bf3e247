import { isbot } from 'isbot';
import { UAParser } from 'ua-parser-js';
import { own } from './dict.js';

/**
 * Browser and OS of one `User-Agent`, as stored on the tracked event
 * (`browser`, `browser_version`, `os`, `os_version` in `tracked-event.ts`).
 * Every field is null when the parser does not recognise it.
 */
export interface UserAgentInfo {
  /** True for crawlers, scripts and empty or hostile strings: such events are dropped (`docs/ingestion.md` "Silent drops"). */
  bot: boolean;
  /** Display name after `BROWSER_NAMES`, e.g. `Chrome`, `Safari`, `Samsung Internet`. */
  browser: string | null;
  /** Major version only, e.g. `126`. */
  browser_version: string | null;
  /** Display name after `OS_NAMES`, e.g. `Windows`, `macOS`, `iOS`, `Android`. */
  os: string | null;
  /** Major version, or the release name where the OS has one (see `OS_VERSIONS`), e.g. `17`, `10.15`, `XP`. */
  os_version: string | null;
}

/**
 * Longer strings are treated as bots without parsing. Real browsers send
 * 100–400 characters (the longest of the isbot browser fixtures is 322); a
 * longer string is hostile or broken, and regex-heavy parsing of it is the
 * cost an attacker would want us to pay.
 */
export const MAX_USER_AGENT_LENGTH = 1024;

/** Default bound of the per-process cache; traffic repeats a few thousand UAs. */
export const DEFAULT_CACHE_ENTRIES = 5_000;

/** Column widths of `tracked-event.ts` (`browser`/`os` 64, versions 32). */
const MAX_NAME = 64;
const MAX_VERSION = 32;

/**
 * ua-parser-js 1.0 names → the names we show, keyed by the parser's name in
 * lower case (its case varies: `brave`/`Brave`, `android`/`Android`).
 * Unlisted names are kept as the parser gives them.
 *
 * Rules: the mobile build of a browser is that browser (the `device` column
 * already says mobile); app-embedded views stay apart from the browser they
 * embed, because they keep their own cookie jar and so their own visitors;
 * all-caps or squashed names get their vendor's spelling.
 */
export const BROWSER_NAMES: Readonly<Record<string, string>> = {
  'mobile safari': 'Safari',
  iemobile: 'Internet Explorer',
  ie: 'Internet Explorer',
  // Android System WebView: in-app pages of Android apps without their own token.
  'chrome webview': 'Android WebView',
  // Google Search App ("GSA/…" token) on iOS.
  gsa: 'Google App',
  ucbrowser: 'UC Browser',
  dragon: 'Comodo Dragon',
  palemoon: 'Pale Moon',
  naver: 'Naver',
  brave: 'Brave',
  conkeror: 'Conkeror',
};

/**
 * ua-parser-js 1.0 OS names → the names we show, keyed in lower case as above.
 * Vendors' current names: Apple renamed Mac OS X to macOS (2016), Google
 * Chromium OS devices ship as ChromeOS (2022).
 */
export const OS_NAMES: Readonly<Record<string, string>> = {
  'mac os': 'macOS',
  'chromium os': 'ChromeOS',
  'windows phone os': 'Windows Phone',
  android: 'Android',
  ubuntu: 'Ubuntu',
  amigaos: 'AmigaOS',
  blackberry: 'BlackBerry',
};

type VersionStyle = (version: string) => string | null;

const majorOf: VersionStyle = (version) => /^\d+/.exec(version)?.[0] ?? null;

/**
 * How much of an OS version to keep, by display OS name; the default is the
 * major version. Windows versions are already release names from the parser
 * (`XP`, `Vista`, `8.1`, `10`; Windows 11 still says NT 10.0). For macOS every
 * 10.x was its own release (10.15 Catalina), and browsers freeze the UA at
 * 10_15_7 since macOS 11, so `10.x` keeps its minor.
 */
export const OS_VERSIONS: Readonly<Record<string, VersionStyle>> = {
  Windows: (version) => version,
  macOS: (version) => /^10\.\d+/.exec(version)?.[0] ?? majorOf(version),
};

const BOT: UserAgentInfo = Object.freeze({
  bot: true,
  browser: null,
  browser_version: null,
  os: null,
  os_version: null,
});

const displayName = (table: Readonly<Record<string, string>>, name: string | undefined): string | null =>
  name ? (own(table, name.toLowerCase()) ?? name).slice(0, MAX_NAME) : null;

const clip = (value: string | null): string | null => (value ? value.slice(0, MAX_VERSION) : null);

/** Parses one UA string that is known not to be a bot. One parser instance is reused: construction is the costly part. */
function describe(parser: UAParser, ua: string): UserAgentInfo {
  const { browser, os } = parser.setUA(ua).getResult();
  const osName = displayName(OS_NAMES, os.name);
  const osStyle = (osName && own(OS_VERSIONS, osName)) || majorOf;
  return Object.freeze({
    bot: false,
    browser: displayName(BROWSER_NAMES, browser.name),
    browser_version: clip(browser.version ? majorOf(browser.version) : null),
    os: osName,
    os_version: clip(os.version ? osStyle(os.version) : null),
  });
}

/** A `parseUserAgent` with its own cache; `size` is the number of cached UAs. */
export interface UserAgentParser {
  parse(ua: string | undefined): UserAgentInfo;
  readonly size: number;
}

/**
 * Builds a UA parser with a bounded least-recently-used cache of `maxEntries`
 * results: a `Map` keeps insertion order, a hit is re-inserted at the end and
 * the first key is evicted when full. Ingestion parses every event (tens of
 * thousands a second per process) and most of them repeat a few UAs, so the hit path is one map
 * lookup. Returned objects are frozen because they are shared between calls.
 */
export function createUserAgentParser(maxEntries = DEFAULT_CACHE_ENTRIES): UserAgentParser {
  const cache = new Map<string, UserAgentInfo>();
  const parser = new UAParser();
  return {
    get size() {
      return cache.size;
    },
    parse(raw) {
      const ua = raw?.trim() ?? '';
      // Empty: `docs/ingestion.md` "Silent drops". Too long: hostile, and not cached so it cannot flush the cache.
      if (ua === '' || ua.length > MAX_USER_AGENT_LENGTH) return BOT;
      const hit = cache.get(ua);
      if (hit) {
        cache.delete(ua);
        cache.set(ua, hit);
        return hit;
      }
      // Bots are dropped (`docs/ingestion.md` "Silent drops"), so their browser and OS are never read: skip the parse.
      const info = isbot(ua) ? BOT : describe(parser, ua);
      if (cache.size >= maxEntries) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(ua, info);
      return info;
    },
  };
}

const shared = createUserAgentParser();

/**
 * Bot flag, browser and OS of a `User-Agent` header value (`docs/ingestion.md` "Enrichment"; bots and
 * empty UAs are dropped, "Silent drops").
 * Bots by isbot 5 (github.com/omrilotan/isbot); browser and OS by ua-parser-js
 * 1.0, then renamed by `BROWSER_NAMES` / `OS_NAMES`. Missing, blank and
 * over-long (> 1,024 chars) strings are bots. Cached per process (5,000 UAs).
 */
export function parseUserAgent(ua: string | undefined): UserAgentInfo {
  return shared.parse(ua);
}
