import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess, startServeProcess } from '../support/cli.js';

describe('footfall demo: the demo site through the real paths', () => {
  let dataDir = '';
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('seeds traffic and payments that the report API then shows', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-demo-'));
    const seeded = await runCliInProcess([
      '--data',
      dataDir,
      '--json',
      'demo',
      '--days',
      '21',
      '--visits-per-day',
      '30',
    ]);
    expect(seeded.status, seeded.stderr).toBe(0);
    const { key, events, webhooks } = JSON.parse(seeded.stdout);
    expect(key).toMatch(/^ff_/);
    expect(events).toBeGreaterThan(500);
    expect(webhooks).toBeGreaterThan(0);

    const { child, url } = await startServeProcess(dataDir, ['--app']);
    try {
      const res = await fetch(`${url}/api/v1/sites/demo.footfall.dev/overview?range=all`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      const overview = await res.json();
      expect(overview.current.sessions).toBeGreaterThan(300);
      expect(overview.current.visitors).toBeGreaterThan(200);
      expect(overview.current.payments).toBeGreaterThan(0);
      expect(overview.current.revenue_usd).toBeGreaterThan(0);
      const channels = await (
        await fetch(`${url}/api/v1/sites/demo.footfall.dev/breakdown/channel?range=all`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json();
      expect(channels.rows.map((r: { label: string }) => r.label)).toEqual(
        expect.arrayContaining(['Search', 'AI', 'Communities']),
      );
      // Invariants on a generated site: every breakdown but page adds up to the overview's payments
      // and revenue (Unattributed row included), and channel visitors add up to sessions.
      for (const dimension of [
        'channel',
        'referrer',
        'campaign',
        'keyword',
        'landing_page',
        'country',
        'device',
        'browser',
        'os',
        'language',
        'utm_source',
        'utm_medium',
        'utm_content',
        'exit_page',
      ]) {
        const b = await (
          await fetch(`${url}/api/v1/sites/demo.footfall.dev/breakdown/${dimension}?range=all&limit=1000`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json();
        const rows = b.rows as Array<{ payments: number; revenue_usd: number; visitors: number }>;
        expect(b.total, dimension).toBe(rows.length);
        expect(
          rows.reduce((n, r) => n + r.payments, 0),
          dimension,
        ).toBe(overview.current.payments);
        expect(
          rows.reduce((n, r) => n + r.revenue_usd, 0),
          dimension,
        ).toBeCloseTo(overview.current.revenue_usd, 2);
        expect(
          rows.reduce((n, r) => n + r.visitors, 0),
          dimension,
        ).toBe(overview.current.sessions);
      }
      // The time series adds up to the overview of the same range, whatever the interval: sessions,
      // payments and revenue (in cents) exactly; visitors are distinct per point, so at least the range's.
      for (const [range, interval] of [
        ['all', 'day'],
        ['all', 'month'],
        ['7d', 'hour'],
        ['today', 'hour'],
      ] as const) {
        const total =
          range === 'all'
            ? overview
            : await (
                await fetch(`${url}/api/v1/sites/demo.footfall.dev/overview?range=${range}`, {
                  headers: { authorization: `Bearer ${key}` },
                })
              ).json();
        // The series asks for the days the overview resolved: `today` asked twice would be two days when the
        // two requests fall either side of midnight in the site's timezone (no test depends on timing).
        const days = range === 'all' ? 'range=all' : `from=${total.range.from}&to=${total.range.to}`;
        const series = await (
          await fetch(`${url}/api/v1/sites/demo.footfall.dev/timeseries?${days}&interval=${interval}`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json();
        const points = series.points as Array<{
          visitors: number;
          sessions: number;
          payments: number;
          revenue_usd: number;
        }>;
        const label = `${range} by ${interval}`;
        expect(series.range, label).toEqual(total.range);
        expect(
          points.reduce((n, p) => n + p.sessions, 0),
          label,
        ).toBe(total.current.sessions);
        expect(
          points.reduce((n, p) => n + p.payments, 0),
          label,
        ).toBe(total.current.payments);
        expect(
          points.reduce((n, p) => n + Math.round(p.revenue_usd * 100), 0),
          label,
        ).toBe(Math.round(total.current.revenue_usd * 100));
        expect(
          points.reduce((n, p) => n + p.visitors, 0),
          label,
        ).toBeGreaterThanOrEqual(total.current.visitors);
        expect(Math.max(0, ...points.map((p) => p.visitors)), label).toBeLessThanOrEqual(total.current.visitors);
      }
      const sql = await runCliInProcess(['--data', dataDir, '--json', 'sql', 'SELECT count(*) AS n FROM events']);
      expect(JSON.parse(sql.stdout)[0].n).toBe(events);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
