import { parseUserAgent } from '../../lambdas/domain/user-agent.js';
import type { CountryLookup } from '../../lambdas/domain/country.js';
import { browserUserAgents, rng } from './workload.js';

/**
 * Who visits the demo site (`docs/demo.md`): a B2B software product read in
 * English, so the shares are the web's where a source gives them, bent to
 * such a site where it must be, and every bend is said. Each table is
 * `[value, weight]`; weights need not add up to 100.
 */
export type Shares<T extends string = string> = ReadonlyArray<readonly [T, number]>;

export type Device = 'Desktop' | 'Mobile' | 'Tablet';
export type Os = 'Windows' | 'macOS' | 'Linux' | 'ChromeOS' | 'Android' | 'iOS';
export type Browser = 'Chrome' | 'Edge' | 'Safari' | 'Firefox' | 'Opera' | 'Samsung Internet';

/**
 * Devices. StatCounter's platform split of the whole web (April 2022, via
 * Wikipedia "Usage share of operating systems": smartphones 58%, desktop 39%,
 * tablets 2.5%) is a consumer web; a B2B product is read at work, so the demo
 * turns it round. Our assumption, not a measurement.
 */
export const DEVICE_SHARES: Shares<Device> = [
  ['Desktop', 64],
  ['Mobile', 33],
  ['Tablet', 3],
];

/**
 * Operating systems per device. StatCounter Global Stats, February 2025 (via
 * Wikipedia, accessed 2025-03-09): desktop Windows 71%, macOS 16%, Linux 4%,
 * ChromeOS 2% (8% unknown, left out); mobile Android 72%, iOS 28%. Tablets:
 * iPadOS 54%, Android 46% (StatCounter, April 2022). An iPad's Safari asks
 * for desktop sites since iPadOS 13, sending a macOS User-Agent, so iPads
 * show as macOS on a tablet-wide screen, as in any analytics tool.
 */
export const OS_SHARES: Readonly<Record<Device, Shares<Os>>> = {
  Desktop: [
    ['Windows', 71],
    ['macOS', 16],
    ['Linux', 4],
    ['ChromeOS', 2],
  ],
  Mobile: [
    ['Android', 72],
    ['iOS', 28],
  ],
  Tablet: [
    ['macOS', 54],
    ['Android', 46],
  ],
};

/**
 * Browsers per operating system, spread so the totals match StatCounter's
 * browser shares (early 2025, as reported by MyDrivers/gagadget): desktop
 * Chrome 70.3%, Edge 11.8%, Safari 6.3%, Firefox 4.9%, Opera 2.1%; mobile
 * Chrome 69.2%, Safari 20.3%, Samsung Internet 3.3%. Safari only runs on
 * Apple systems (6.3% of desktop = 40% of macOS), Edge mostly on Windows.
 * Chrome for iOS has no User-Agent in the shared data, so its quarter of iOS
 * is counted as Safari (both are WebKit there); nor has a stock Firefox on a
 * desktop Linux (Ubuntu's says `Ubuntu`), so Linux is Chrome.
 */
export const BROWSER_SHARES: Readonly<Record<Os, Shares<Browser>>> = {
  Windows: [
    ['Chrome', 77],
    ['Edge', 16],
    ['Firefox', 4],
    ['Opera', 3],
  ],
  macOS: [
    ['Chrome', 52],
    ['Safari', 40],
    ['Firefox', 5],
    ['Edge', 3],
  ],
  Linux: [['Chrome', 100]],
  ChromeOS: [['Chrome', 100]],
  Android: [
    ['Chrome', 89],
    ['Samsung Internet', 5],
    ['Firefox', 3],
    ['Opera', 3],
  ],
  iOS: [['Safari', 100]],
};

/** Browsers on tablets: iPads (macOS, see `OS_SHARES`) run Safari; Samsung's browser ships on its tablets. */
export const TABLET_BROWSER_SHARES: Readonly<Partial<Record<Os, Shares<Browser>>>> = {
  macOS: [['Safari', 100]],
  Android: [
    ['Chrome', 82],
    ['Samsung Internet', 18],
  ],
};

/**
 * CSS viewport widths (what the tracker sends as `w`) per device: the common
 * desktop resolutions at their usual scaling (1920 at 100%, 1536 = 1920 at
 * 125%, 1366 and 1440 laptops, 2560 monitors) and the widths of the phones
 * and tablets sold most (iPhone 390/393/430, Android 360/384/412, iPad
 * 768/810/820, Android tablets 800). Our assumption, ordered as StatCounter's
 * screen-resolution tables order them; the weights are not from a source.
 */
export const WIDTH_SHARES: Readonly<Record<Device, Shares<string>>> = {
  Desktop: [
    ['1920', 30],
    ['1536', 18],
    ['1366', 12],
    ['1440', 12],
    ['1280', 8],
    ['2560', 8],
    ['1680', 5],
    ['1600', 4],
    ['3440', 3],
  ],
  Mobile: [
    ['390', 22],
    ['393', 14],
    ['412', 18],
    ['360', 14],
    ['430', 12],
    ['384', 8],
    ['375', 7],
    ['414', 5],
  ],
  Tablet: [
    ['820', 30],
    ['768', 30],
    ['810', 20],
    ['800', 20],
  ],
};

/** A country of the demo's audience: its share, the hours it is behind or ahead of UTC, and its browsers' languages. */
export interface Market {
  country: string;
  weight: number;
  /** Hours from UTC of where most of its people live (standard time; the demo ignores DST). */
  utcOffset: number;
  /** `Accept-Language` values and their shares: developers often run an English browser. */
  languages: Shares;
}

const en = (tag: string) => `${tag},en;q=0.9`;
const local = (tag: string) => `${tag},${tag.slice(0, 2)};q=0.9,en;q=0.8`;

/**
 * Countries of an English-language B2B software site: the United States
 * first, then the large European markets, India and the rest of the
 * English-speaking world. Our assumption for such a site, not a measurement.
 * Addresses come from the IP database (`addressPools`), so every event's
 * country is the one the database gives its address.
 */
export const MARKETS: readonly Market[] = [
  {
    country: 'US',
    weight: 31,
    utcOffset: -6,
    languages: [
      [en('en-US'), 93],
      [local('es-US'), 7],
    ],
  },
  {
    country: 'DE',
    weight: 8,
    utcOffset: 1,
    languages: [
      [local('de-DE'), 65],
      [en('en-US'), 35],
    ],
  },
  {
    country: 'GB',
    weight: 7,
    utcOffset: 0,
    languages: [
      [en('en-GB'), 90],
      [en('en-US'), 10],
    ],
  },
  {
    country: 'IN',
    weight: 6,
    utcOffset: 5.5,
    languages: [
      [en('en-IN'), 55],
      [en('en-US'), 40],
      [local('hi-IN'), 5],
    ],
  },
  {
    country: 'CA',
    weight: 4,
    utcOffset: -5,
    languages: [
      [en('en-CA'), 70],
      [local('fr-CA'), 20],
      [en('en-US'), 10],
    ],
  },
  {
    country: 'FR',
    weight: 4,
    utcOffset: 1,
    languages: [
      [local('fr-FR'), 75],
      [en('en-US'), 25],
    ],
  },
  {
    country: 'NL',
    weight: 3,
    utcOffset: 1,
    languages: [
      [local('nl-NL'), 45],
      [en('en-US'), 55],
    ],
  },
  {
    country: 'BR',
    weight: 3,
    utcOffset: -3,
    languages: [
      [local('pt-BR'), 80],
      [en('en-US'), 20],
    ],
  },
  {
    country: 'AU',
    weight: 3,
    utcOffset: 10,
    languages: [
      [en('en-AU'), 85],
      [en('en-US'), 15],
    ],
  },
  {
    country: 'ES',
    weight: 2.5,
    utcOffset: 1,
    languages: [
      [local('es-ES'), 75],
      [en('en-US'), 25],
    ],
  },
  {
    country: 'IT',
    weight: 2,
    utcOffset: 1,
    languages: [
      [local('it-IT'), 75],
      [en('en-US'), 25],
    ],
  },
  {
    country: 'PL',
    weight: 2,
    utcOffset: 1,
    languages: [
      [local('pl-PL'), 65],
      [en('en-US'), 35],
    ],
  },
  {
    country: 'SE',
    weight: 2,
    utcOffset: 1,
    languages: [
      [local('sv-SE'), 50],
      [en('en-US'), 50],
    ],
  },
  {
    country: 'JP',
    weight: 2,
    utcOffset: 9,
    languages: [
      [local('ja-JP'), 90],
      [en('en-US'), 10],
    ],
  },
  {
    country: 'CH',
    weight: 1.5,
    utcOffset: 1,
    languages: [
      [local('de-CH'), 50],
      [local('fr-CH'), 20],
      [en('en-US'), 30],
    ],
  },
  {
    country: 'SG',
    weight: 1.5,
    utcOffset: 8,
    languages: [
      [en('en-SG'), 70],
      [en('en-US'), 30],
    ],
  },
  {
    country: 'MX',
    weight: 1.5,
    utcOffset: -6,
    languages: [
      [local('es-MX'), 80],
      [en('en-US'), 20],
    ],
  },
  {
    country: 'IE',
    weight: 1,
    utcOffset: 0,
    languages: [
      [en('en-IE'), 80],
      [en('en-US'), 20],
    ],
  },
  {
    country: 'PT',
    weight: 1,
    utcOffset: 0,
    languages: [
      [local('pt-PT'), 65],
      [en('en-US'), 35],
    ],
  },
  {
    country: 'AT',
    weight: 1,
    utcOffset: 1,
    languages: [
      [local('de-AT'), 70],
      [en('en-US'), 30],
    ],
  },
  {
    country: 'BE',
    weight: 1,
    utcOffset: 1,
    languages: [
      [local('nl-BE'), 40],
      [local('fr-BE'), 30],
      [en('en-US'), 30],
    ],
  },
  {
    country: 'DK',
    weight: 1,
    utcOffset: 1,
    languages: [
      [local('da-DK'), 50],
      [en('en-US'), 50],
    ],
  },
  {
    country: 'NO',
    weight: 1,
    utcOffset: 1,
    languages: [
      [local('nb-NO'), 50],
      [en('en-US'), 50],
    ],
  },
  {
    country: 'FI',
    weight: 1,
    utcOffset: 2,
    languages: [
      [local('fi-FI'), 50],
      [en('en-US'), 50],
    ],
  },
  {
    country: 'CZ',
    weight: 1,
    utcOffset: 1,
    languages: [
      [local('cs-CZ'), 60],
      [en('en-US'), 40],
    ],
  },
  {
    country: 'UA',
    weight: 1,
    utcOffset: 2,
    languages: [
      [local('uk-UA'), 60],
      [en('en-US'), 40],
    ],
  },
  {
    country: 'IL',
    weight: 1,
    utcOffset: 2,
    languages: [
      [local('he-IL'), 40],
      [en('en-US'), 60],
    ],
  },
  {
    country: 'TR',
    weight: 1,
    utcOffset: 3,
    languages: [
      [local('tr-TR'), 70],
      [en('en-US'), 30],
    ],
  },
  {
    country: 'ZA',
    weight: 1,
    utcOffset: 2,
    languages: [
      [en('en-ZA'), 85],
      [en('en-US'), 15],
    ],
  },
  {
    country: 'NG',
    weight: 1,
    utcOffset: 1,
    languages: [
      [en('en-NG'), 60],
      [en('en-US'), 40],
    ],
  },
  {
    country: 'KR',
    weight: 1,
    utcOffset: 9,
    languages: [
      [local('ko-KR'), 85],
      [en('en-US'), 15],
    ],
  },
  {
    country: 'ID',
    weight: 1,
    utcOffset: 7,
    languages: [
      [local('id-ID'), 60],
      [en('en-US'), 40],
    ],
  },
  {
    country: 'PH',
    weight: 1,
    utcOffset: 8,
    languages: [
      [en('en-PH'), 60],
      [en('en-US'), 40],
    ],
  },
  {
    country: 'NZ',
    weight: 0.7,
    utcOffset: 12,
    languages: [
      [en('en-NZ'), 85],
      [en('en-US'), 15],
    ],
  },
  {
    country: 'AR',
    weight: 0.8,
    utcOffset: -3,
    languages: [
      [local('es-AR'), 80],
      [en('en-US'), 20],
    ],
  },
  {
    country: 'RO',
    weight: 0.8,
    utcOffset: 2,
    languages: [
      [local('ro-RO'), 60],
      [en('en-US'), 40],
    ],
  },
];

/**
 * Browsers and systems that must never appear in the demo: long dead, or
 * never a real share of any site's traffic (an older demo showed visits from
 * Internet Explorer).
 */
export const NOT_IN_THE_DEMO = {
  browsers: [
    'Internet Explorer',
    'IE',
    'IEMobile',
    'Netscape',
    'Mozilla',
    'Camino',
    'Flock',
    'Konqueror',
    'Lynx',
    'Maxthon',
    'SeaMonkey',
    'Avant',
    'Dragon',
    'Iron',
    'Lunascape',
    'PaleMoon',
    'Puffin',
  ],
  os: ['AmigaOS', 'BeOS', 'MorphOS', 'Windows Phone', 'BlackBerry', 'Symbian', 'OS/2', 'Haiku'],
} as const;

/** Picks a value from a share table. */
export function pick<T extends string>(shares: Shares<T>, random: () => number): T {
  const total = shares.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [value, weight] of shares) if ((r -= weight) < 0) return value;
  return shares[shares.length - 1]![0];
}

/**
 * Real User-Agent strings (`test/fixtures/user-agents/browsers.yml`, from
 * isbot's fixtures, the same file as `../shared/data/user-agents`) per
 * `browser|os`, as Footfall parses them: the newest strings (at most 4, with a
 * major version at least 80% of the newest one's, so no Safari 2 beside
 * Safari 12); tablets prefer an Android string without `Mobile`. Only the
 * standard form of a stock browser (`STOCK_BROWSER`; no Android WebView).
 * @throws Error naming a cell of `BROWSER_SHARES` with no string at all
 */
export function userAgentsByCell(): Map<string, { phone: string[]; tablet: string[] }> {
  const cells = new Map<string, Array<{ ua: string; version: number; tablet: boolean }>>();
  for (const ua of browserUserAgents()) {
    if (!STOCK_BROWSER.test(ua) || /; wv\)/.test(ua)) continue;
    const agent = parseUserAgent(ua);
    if (agent.bot || !agent.browser || !agent.os) continue;
    const key = `${agent.browser}|${agent.os}`;
    const list = cells.get(key) ?? [];
    list.push({
      ua,
      version: Number.parseInt(agent.browser_version ?? '0', 10) || 0,
      tablet: /^(?!.*Mobile).*Android/.test(ua),
    });
    cells.set(key, list);
  }
  const out = new Map<string, { phone: string[]; tablet: string[] }>();
  for (const [os, browsers] of Object.entries(BROWSER_SHARES)) {
    for (const [browser] of browsers) {
      const list = (cells.get(`${browser}|${os}`) ?? []).sort(
        (a, b) => b.version - a.version || a.ua.localeCompare(b.ua),
      );
      if (list.length === 0) throw new Error(`no User-Agent for ${browser} on ${os} in the shared data`);
      const newest = (l: typeof list) =>
        l
          .filter((e) => e.version >= 0.8 * (l[0]?.version ?? 0))
          .slice(0, 4)
          .map((e) => e.ua);
      const tablets = list.filter((e) => e.tablet);
      out.set(`${browser}|${os}`, {
        phone: newest(list.filter((e) => !e.tablet).length ? list.filter((e) => !e.tablet) : list),
        tablet: newest(tablets.length ? tablets : list),
      });
    }
  }
  return out;
}

/**
 * A stock browser's User-Agent, token for token: WebKit browsers
 * (`AppleWebKit/… (KHTML, like Gecko)`, then `Version/` or `SamsungBrowser/`,
 * `Chrome/`, `Mobile/…`, `Safari/…` and Edge's `Edg/` or Opera's `OPR/` last)
 * and Firefox (`Gecko/… Firefox/…`). Anything appended (an app, a cleaner
 * suite, an in-app browser) is a real string but not a browser a visitor picked.
 */
const STOCK_BROWSER =
  /^Mozilla\/5\.0 \([^()]+\) (AppleWebKit\/[\d.]+ \(KHTML, like Gecko\) ((Version|SamsungBrowser)\/[\d.]+ )?(Chrome\/[\d.]+ )?(Mobile\/\w+ )?(Mobile )?Safari\/[\d.]+( (Edg|OPR)\/[\d.]+)?|Gecko\/[\d.]+ Firefox\/[\d.]+)$/;

/** Public unicast IPv4 only: no private, loopback, link-local, shared, multicast or documentation block. */
function isPublic(a: number, b: number, c: number): boolean {
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (
    (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 168)
  )
    return false;
  // RFC 5737 documentation ranges and 192.0.0.0/24, 198.18.0.0/15 (benchmarking).
  if (
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113)
  )
    return false;
  return true;
}

/**
 * Visitor addresses per country, found in the IP database itself: random
 * public IPv4 addresses (seeded, so the demo is the same each run) looked up
 * until every market has `perCountry` of them. So the demo's events carry
 * addresses the database places in their country, never documentation ranges,
 * and `npm start` shows countries through the same lookup as live traffic.
 * @throws Error when a market's country is not found in 4 million draws
 */
export function addressPools(countries: CountryLookup, perCountry = 48, seed = 20261123): Map<string, string[]> {
  const random = rng(seed);
  const wanted = new Set(MARKETS.map((m) => m.country));
  const pools = new Map<string, string[]>(MARKETS.map((m) => [m.country, []]));
  let missing = wanted.size;
  for (let draw = 0; draw < 4_000_000 && missing > 0; draw++) {
    const a = 1 + Math.floor(random() * 223);
    const b = Math.floor(random() * 256);
    const c = Math.floor(random() * 256);
    if (!isPublic(a, b, c)) continue;
    const ip = `${a}.${b}.${c}.${1 + Math.floor(random() * 254)}`;
    const country = countries.countryOf(ip);
    const pool = country ? pools.get(country) : undefined;
    if (!pool || pool.length >= perCountry) continue;
    pool.push(ip);
    if (pool.length === perCountry) missing--;
  }
  const empty = [...pools].filter(([, p]) => p.length === 0).map(([c]) => c);
  if (empty.length > 0) throw new Error(`no address for ${empty.join(', ')} in the country database`);
  return pools;
}
