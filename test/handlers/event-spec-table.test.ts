import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { localPaths } from '../../local/service.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { CHROME_UA } from '../support/events.js';
import { startTestService } from '../support/local.js';

type Service = Awaited<ReturnType<typeof startTestService>>;

const SITE = 'example.com';
const NOW = Date.UTC(2026, 10, 21, 10, 30);
const VALID_V = 'abcdefgh-1234';

/**
 * One row of `docs/ingestion.md` "The event's fields", "Repairs": the fields sent on top of a page
 * view of its own path, the status, and what lands in the archive (null:
 * nothing). `u` is `https://example.com/<row id>` unless the row sets it.
 */
interface Row {
  id: string;
  fields: Record<string, unknown>;
  status: number;
  archived: Partial<TrackedEvent> | null;
}

const goal64 = 'x'.repeat(64);
// 21 three-byte characters are 63 bytes; a 22nd would split at byte 64, so it is left out.
const euros = '€'.repeat(30);

const ROWS: Row[] = [
  // n: `pageview` or `goal`, anything else dropped
  { id: 'n-pageview', fields: { n: 'pageview' }, status: 202, archived: { type: 'pageview', goal: null } },
  { id: 'n-goal', fields: { n: 'goal', g: 'Signup' }, status: 202, archived: { type: 'goal', goal: 'Signup' } },
  { id: 'n-other', fields: { n: 'click' }, status: 202, archived: null },
  { id: 'n-case', fields: { n: 'Pageview' }, status: 202, archived: null },
  { id: 'n-number', fields: { n: 5 }, status: 202, archived: null },
  { id: 'n-proto', fields: { n: 'toString' }, status: 202, archived: null },
  { id: 'n-missing', fields: { n: undefined }, status: 400, archived: null },
  // u: an absolute http(s) URL on the site's host, else dropped
  {
    id: 'u-subdomain',
    fields: { u: `https://app.${SITE}/u-subdomain` },
    status: 202,
    archived: { hostname: `app.${SITE}`, path: '/u-subdomain' },
  },
  {
    id: 'u-query',
    fields: { u: `https://${SITE}/u-query?utm_source=hn&utm_campaign=launch&gclid=1` },
    status: 202,
    archived: { path: '/u-query', utm_source: 'hn', utm_campaign: 'launch', click_ids: 'gclid' },
  },
  {
    id: 'u-hash-route',
    fields: { u: `https://${SITE}/u-hash-route#/settings` },
    status: 202,
    archived: { path: '/u-hash-route#/settings' },
  },
  {
    id: 'u-long',
    fields: { u: `https://${SITE}/u-long/${'a'.repeat(3000)}` },
    status: 202,
    archived: { path: `/u-long/${'a'.repeat(2048 - 8)}` },
  },
  { id: 'u-foreign', fields: { u: 'https://evil.test/u-foreign' }, status: 202, archived: null },
  { id: 'u-lookalike', fields: { u: `https://not${SITE}/u-lookalike` }, status: 202, archived: null },
  { id: 'u-not-url', fields: { u: 'not a url' }, status: 202, archived: null },
  { id: 'u-javascript', fields: { u: 'javascript:alert(1)' }, status: 202, archived: null },
  { id: 'u-number', fields: { u: 42 }, status: 202, archived: null },
  { id: 'u-missing', fields: { u: undefined }, status: 400, archived: null },
  // s: a configured site, else dropped
  { id: 's-case-space', fields: { s: ` EXAMPLE.com ` }, status: 202, archived: { site: SITE } },
  { id: 's-unknown', fields: { s: 'nosuchsite.test' }, status: 202, archived: null },
  { id: 's-300', fields: { s: 'a'.repeat(300) }, status: 202, archived: null },
  { id: 's-number', fields: { s: 7 }, status: 202, archived: null },
  { id: 's-missing', fields: { s: undefined }, status: 400, archived: null },
  // r: only the host, only another site
  {
    id: 'r-other',
    fields: { r: 'https://news.ycombinator.com/item?id=1' },
    status: 202,
    archived: { referrer_host: 'news.ycombinator.com', channel: 'Communities', source: 'Hacker News' },
  },
  {
    id: 'r-self',
    fields: { r: `https://www.${SITE}/pricing` },
    status: 202,
    archived: { referrer_host: null, channel: 'Direct' },
  },
  { id: 'r-null', fields: { r: null }, status: 202, archived: { referrer_host: null } },
  { id: 'r-not-url', fields: { r: 'nope' }, status: 202, archived: { referrer_host: null } },
  { id: 'r-number', fields: { r: 42 }, status: 202, archived: { referrer_host: null } },
  {
    id: 'r-long-host',
    fields: { r: `https://${'a.'.repeat(150)}test/` },
    status: 202,
    archived: { referrer_host: null },
  },
  // v: 8 to 64 letters, digits or dashes, else the daily hash
  { id: 'v-valid', fields: { v: VALID_V }, status: 202, archived: { visitor_id: VALID_V, visitor_kind: 'id' } },
  {
    id: 'v-64',
    fields: { v: 'v'.repeat(64) },
    status: 202,
    archived: { visitor_id: 'v'.repeat(64), visitor_kind: 'id' },
  },
  { id: 'v-7', fields: { v: 'abcdefg' }, status: 202, archived: { visitor_kind: 'hash' } },
  { id: 'v-65', fields: { v: 'v'.repeat(65) }, status: 202, archived: { visitor_kind: 'hash' } },
  { id: 'v-300', fields: { v: 'v'.repeat(300) }, status: 202, archived: { visitor_kind: 'hash' } },
  { id: 'v-bang', fields: { v: 'bad id!!' }, status: 202, archived: { visitor_kind: 'hash' } },
  { id: 'v-number', fields: { v: 123456789 }, status: 202, archived: { visitor_kind: 'hash' } },
  // w: rounding and the unknown cases are ours, docs/ingestion.md "Repairs"
  { id: 'w-390', fields: { w: 390 }, status: 202, archived: { device: 'Mobile', screen_width: 390 } },
  { id: 'w-800', fields: { w: 800 }, status: 202, archived: { device: 'Tablet', screen_width: 800 } },
  { id: 'w-1280', fields: { w: 1280 }, status: 202, archived: { device: 'Desktop', screen_width: 1280 } },
  { id: 'w-missing', fields: {}, status: 202, archived: { device: 'Unknown', screen_width: null } },
  { id: 'w-1.5', fields: { w: 1.5 }, status: 202, archived: { device: 'Mobile', screen_width: 2 } },
  { id: 'w-767.6', fields: { w: 767.6 }, status: 202, archived: { device: 'Tablet', screen_width: 768 } },
  { id: 'w-negative', fields: { w: -5 }, status: 202, archived: { device: 'Unknown', screen_width: null } },
  { id: 'w-1e308', fields: { w: 1e308 }, status: 202, archived: { device: 'Unknown', screen_width: null } },
  { id: 'w-string', fields: { w: '390' }, status: 202, archived: { device: 'Unknown', screen_width: null } },
  // g: trimmed, cut to 64 bytes; goals without one are dropped
  { id: 'g-trim', fields: { n: 'goal', g: '  Signup  ' }, status: 202, archived: { type: 'goal', goal: 'Signup' } },
  { id: 'g-2000', fields: { n: 'goal', g: 'x'.repeat(2000) }, status: 202, archived: { type: 'goal', goal: goal64 } },
  { id: 'g-multibyte', fields: { n: 'goal', g: euros }, status: 202, archived: { type: 'goal', goal: '€'.repeat(21) } },
  { id: 'g-missing', fields: { n: 'goal' }, status: 202, archived: null },
  { id: 'g-blank', fields: { n: 'goal', g: '   ' }, status: 202, archived: null },
  { id: 'g-number', fields: { n: 'goal', g: 404 }, status: 202, archived: null },
  { id: 'g-on-pageview', fields: { g: 'ignored' }, status: 202, archived: { type: 'pageview', goal: null } },
  // l (ours: the outbound link of a goal)
  {
    id: 'l-goal',
    fields: { n: 'goal', g: 'Outbound Link: Click', l: 'https://github.com/x' },
    status: 202,
    archived: { goal: 'Outbound Link: Click', link: 'https://github.com/x' },
  },
  { id: 'l-pageview', fields: { l: 'https://github.com/x' }, status: 202, archived: { link: null } },
  { id: 'l-number', fields: { n: 'goal', g: 'Outbound Link: Click', l: 5 }, status: 202, archived: { link: null } },
  // unknown fields are ignored
  { id: 'x-extra', fields: { extra: { deep: [[[[[[[[[[1]]]]]]]]]] } }, status: 202, archived: { type: 'pageview' } },
];

describe('POST /api/event: every field as sent, its status and what lands in the archive', () => {
  let svc: Service;
  const archived = new Map<string, TrackedEvent>();

  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, rate_limit: 1_000_000 }], {
      clock: () => NOW,
      sessionizeIntervalMs: 0,
    });
    for (const row of ROWS) {
      const event = { n: 'pageview', u: `https://${SITE}/${row.id}`, s: SITE, ...row.fields };
      const res = await fetch(`${svc.url}/api/event`, {
        method: 'POST',
        headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' },
        body: JSON.stringify(event),
      });
      expect(res.status, row.id).toBe(row.status);
      expect(res.headers.get('access-control-allow-origin'), row.id).toBe('*');
    }
    // The sessionizer forwards what it sessionized to the archive (docs/ingestion.md, "Archive packed").
    await svc.sessionize();
    await svc.archive();
    const day = new Date(NOW).toISOString().slice(0, 10);
    for await (const page of await new DuckDbArchiveReader(localPaths(svc.dataDir).archive).events(SITE, day, day)) {
      for (const event of page) archived.set(event.path.split('/')[1]?.split('#')[0] ?? '', event);
    }
  });
  afterAll(async () => svc.cleanup());

  it.each(ROWS.map((row) => [row.id, row] as const))('%s', (id, row) => {
    const event = archived.get(id);
    if (row.archived === null) expect(event, id).toBeUndefined();
    else expect(event, id).toMatchObject({ site: SITE, ts: NOW, ...row.archived });
  });

  it('archives exactly the kept rows, nothing else', () => {
    expect([...archived.keys()].sort()).toEqual(
      ROWS.filter((r) => r.archived !== null)
        .map((r) => r.id)
        .sort(),
    );
  });
});
