import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { overviewResponse } from '../../lambdas/domain/reports/schemas.js';
import { createArchiveConsumer } from '../../local/archive.js';
import { localPaths } from '../../local/service.js';
import { runSql } from '../../local/sql.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';

/**
 * The invariant of `docs/api.md` "Top stats (overview)": the overview's top stats (pageviews, views per
 * visit, bounce rate, visit duration) equal what an analyst computes with
 * DuckDB from the raw Parquet archive of the same events, sessionizing in SQL
 * (a new visit after 30 minutes without an event). A generated site of 10
 * UTC days: visitors with 1 to 6 events, page views and goals, gaps that
 * sometimes exceed 30 minutes.
 */
const SITE = 'gen.test';
const NOW = Date.UTC(2026, 2, 12, 12);
const FROM = Date.UTC(2026, 2, 1);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

function generate() {
  const random = rng(20);
  const events = [];
  for (let v = 0; v < 150; v++) {
    let ts = FROM + Math.floor(random() * 9 * 86_400_000);
    const n = 1 + Math.floor(random() * 6);
    for (let i = 0; i < n; i++) {
      const goal = random() < 0.2;
      events.push(
        trackedEvent({
          event_id: `g-${v}-${i}`,
          site: SITE,
          hostname: SITE,
          visitor_id: `visitor-${String(v).padStart(4, '0')}`,
          ts,
          path: `/p${Math.floor(random() * 5)}`,
          ...(goal ? { type: 'goal' as const, goal: 'Signup' } : {}),
        }),
      );
      ts += Math.floor(random() * (random() < 0.2 ? 3_600_000 : 600_000));
    }
  }
  return events;
}

const SQL = `
WITH e AS (SELECT visitor_id, event_id, epoch_ms(ts) AS t, type FROM events WHERE site = '${SITE}'),
g AS (SELECT *, CASE WHEN lag(t) OVER w IS NULL OR t - lag(t) OVER w >= 1800000 THEN 1 ELSE 0 END AS starts
      FROM e WINDOW w AS (PARTITION BY visitor_id ORDER BY t, event_id)),
n AS (SELECT *, sum(starts) OVER (PARTITION BY visitor_id ORDER BY t, event_id ROWS UNBOUNDED PRECEDING) AS visit FROM g),
visits AS (SELECT visitor_id, visit, min(t) AS start_ms, max(t) AS end_ms, count(*) AS events,
                  count(*) FILTER (WHERE type = 'pageview') AS pageviews, count(*) FILTER (WHERE type = 'goal') AS goals
           FROM n GROUP BY visitor_id, visit)
SELECT count(*) AS sessions, sum(pageviews) AS pageviews,
       count(*) FILTER (WHERE pageviews = 1 AND goals = 0) AS bounces,
       count(*) FILTER (WHERE events > 1) AS timed, sum(end_ms - start_ms) FILTER (WHERE events > 1) AS duration_ms
FROM visits`;

describe('top stats agree with DuckDB over the Parquet archive (generated site)', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let archive = '';
  let key = '';
  const events = generate();
  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true, clock: () => NOW });
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'tests', new Date(NOW))).key;
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(events);
    await stream.close();
    await svc.sessionize();
    archive = await mkdtemp(join(tmpdir(), 'ff-goals-archive-'));
    const consumer = createArchiveConsumer(archive);
    await consumer(
      events.map((e, i) => ({
        sequenceNumber: String(i + 1).padStart(20, '0'),
        partitionKey: e.visitor_id,
        approximateArrivalTimestamp: e.ts,
        data: Buffer.from(JSON.stringify(e)),
      })),
    );
    await consumer.close();
  }, 120_000);
  afterAll(async () => {
    await svc.cleanup();
    await rm(archive, { recursive: true, force: true });
  });

  it('pageviews, views per visit, bounce rate and visit duration', async () => {
    const res = await fetch(`${svc.url}/api/v1/sites/${SITE}/overview?from=2026-03-01&to=2026-03-11`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const o = overviewResponse.parse(await res.json());
    const result = await runSql(archive, SQL);
    const row = (result.rows[0] ?? []) as unknown[];
    const duck = Object.fromEntries(result.columns.map((c, i) => [c, Number(row[i])]));
    expect(duck.sessions).toBeGreaterThan(150);
    expect(duck.bounces).toBeGreaterThan(0);
    expect({ sessions: o.current.sessions, pageviews: o.current.pageviews }).toEqual({
      sessions: duck.sessions,
      pageviews: duck.pageviews,
    });
    expect(o.current.views_per_visit).toBe(Math.round((duck.pageviews! / duck.sessions!) * 1e6) / 1e6);
    expect(o.current.bounce_rate).toBe(Math.round((duck.bounces! / duck.sessions!) * 1e6) / 1e6);
    expect(o.current.visit_duration).toBe(Math.round(duck.duration_ms! / 1000 / duck.timed!));
  });
});
