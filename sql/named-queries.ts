/**
 * Saved queries over the raw event archive, shipped as Athena named queries
 * (the CDK stack turns each into a `CfnNamedQuery`) and documented in
 * `docs/sql.md`. Each is plain, portable SQL that runs unchanged on Athena
 * (Trino) against the Glue table `events` and on DuckDB (`footfall sql`)
 * against the local view `events`: the archive's columns plus the partition
 * columns `site` and `dt` (strings). Named queries take no parameters, so the
 * site, dates and visitor are example literals to edit before running.
 *
 * Always filter on `site` and `dt`: they are the partitions, so Athena reads
 * (and bills) only those objects. `dt` is the UTC date of the event, not the
 * site's local day.
 */
export interface NamedQuery {
  /** Identifier, also the Athena named query's name: lowercase words joined by `_`. */
  name: string;
  /** One sentence: what the result shows. */
  description: string;
  sql: string;
}

const RANGE = `site = 'example.com'\n  AND dt BETWEEN '2026-01-01' AND '2026-01-31'`;

export const NAMED_QUERIES: ReadonlyArray<NamedQuery> = [
  {
    name: 'top_pages',
    description: 'Page views and distinct visitors per path of one site over a range of days, most viewed first.',
    sql: `SELECT path,
  COUNT(*) AS pageviews,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
  AND type = 'pageview'
GROUP BY path
ORDER BY pageviews DESC, visitors DESC, path
LIMIT 100`,
  },
  {
    name: 'channels',
    description:
      "Page views and distinct visitors by channel (each page view's own channel) of one site over a range of days.",
    sql: `SELECT channel,
  COUNT(*) AS pageviews,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
  AND type = 'pageview'
GROUP BY channel
ORDER BY pageviews DESC, visitors DESC, channel`,
  },
  {
    name: 'top_referrers',
    description:
      'Page views and distinct visitors per referring host (other sites only) of one site over a range of days.',
    sql: `SELECT referrer_host,
  COUNT(*) AS pageviews,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
  AND type = 'pageview'
  AND referrer_host IS NOT NULL
GROUP BY referrer_host
ORDER BY pageviews DESC, visitors DESC, referrer_host
LIMIT 100`,
  },
  {
    name: 'goals',
    description:
      'Conversions (goal events) and distinct converting visitors per goal name of one site over a range of days.',
    sql: `SELECT goal,
  COUNT(*) AS conversions,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
  AND type = 'goal'
GROUP BY goal
ORDER BY conversions DESC, visitors DESC, goal`,
  },
  {
    name: 'outbound_links',
    description:
      "Clicks and distinct visitors per outbound link (goal 'Outbound Link: Click') of one site over a range of days.",
    sql: `SELECT link,
  COUNT(*) AS clicks,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
  AND type = 'goal'
  AND goal = 'Outbound Link: Click'
GROUP BY link
ORDER BY clicks DESC, visitors DESC, link
LIMIT 100`,
  },
  {
    name: 'visitor_events',
    description:
      "Every event of one visitor on one site over a range of days, in time order: the visitor's raw timeline.",
    sql: `SELECT ts, type, goal, path, link, channel, source, referrer_host, event_id
FROM events
WHERE ${RANGE}
  AND visitor_id = 'visitor-0001'
ORDER BY ts, event_id`,
  },
  {
    name: 'events_per_day',
    description: 'Events, page views and distinct visitors per UTC day (dt) of one site over a range of days.',
    sql: `SELECT dt,
  COUNT(*) AS total_events,
  COUNT(CASE WHEN type = 'pageview' THEN 1 END) AS pageviews,
  COUNT(DISTINCT visitor_id) AS visitors
FROM events
WHERE ${RANGE}
GROUP BY dt
ORDER BY dt`,
  },
];
