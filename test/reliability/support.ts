import { appendFile } from 'node:fs/promises';
import type { Accounting } from '../../bench/load.js';

/** `FOOTFALL_RELIABILITY=long`: the long form, whose figures `docs/reliability.md` quotes. */
export const LONG = process.env.FOOTFALL_RELIABILITY === 'long';

/**
 * Prints a check's figures as one line (`[reliability] name {…}`) and, when
 * `FOOTFALL_RELIABILITY_OUT` names a file, appends them to it as a JSON line.
 */
export async function report(name: string, figures: Record<string, unknown>): Promise<void> {
  const line = JSON.stringify({
    check: name,
    form: LONG ? 'long' : 'short',
    date: new Date().toISOString(),
    ...figures,
  });
  console.log(`[reliability] ${line}`);
  const out = process.env.FOOTFALL_RELIABILITY_OUT;
  if (out) await appendFile(out, `${line}\n`);
}

/** How often each value occurs. */
export function counts(values: Iterable<string>): Map<string, number> {
  const map = new Map<string, number>();
  for (const v of values) map.set(v, (map.get(v) ?? 0) + 1);
  return map;
}

/** Values of `values` whose count in `counts` is not exactly one (at most `limit` of them). */
export function notExactlyOnce(
  values: Iterable<string>,
  seen: Map<string, number>,
  limit = 10,
): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const v of values) {
    const n = seen.get(v) ?? 0;
    if (n !== 1) out.push([v, n]);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Every event acknowledged (in a 202) is on the stream exactly once; nothing is
 * on the stream that was not sent; and the stream, the archive and the
 * sessionized visits hold the same events, each exactly once; the day rollups
 * count every page view and every visit once. Returns the problems found
 * (empty when all holds), so a failure lists them all at once.
 */
export function accountingProblems(
  a: Accounting,
  acked: readonly string[],
  sent: readonly string[],
): Record<string, unknown> {
  const problems: Record<string, unknown> = {};
  const streamTokens = counts(a.stream.map((e) => e.token ?? '(none)'));
  const streamIds = counts(a.stream.map((e) => e.id));
  const sentSet = new Set(sent);
  const check = (name: string, bad: unknown[]) => {
    if (bad.length > 0) problems[name] = bad.slice(0, 10);
  };
  check('acknowledged but not exactly once on the stream', notExactlyOnce(acked, streamTokens));
  check(
    'on the stream but never sent',
    [...streamTokens.keys()].filter((t) => !sentSet.has(t)),
  );
  check(
    'token twice on the stream',
    [...streamTokens].filter(([, n]) => n !== 1),
  );
  check(
    'event id twice on the stream',
    [...streamIds].filter(([, n]) => n !== 1),
  );
  for (const [place, list] of [
    ['archive', a.archive],
    ['visits', a.visits],
  ] as const) {
    const ids = counts(list.map((e) => e.id));
    check(`stream event not exactly once in the ${place}`, notExactlyOnce(streamIds.keys(), ids));
    check(
      `in the ${place} but not on the stream`,
      [...ids.keys()].filter((id) => !streamIds.has(id)),
    );
  }
  const pageviews = a.stream.filter((e) => !e.goal).length;
  if (a.rollups.pageviews !== pageviews)
    problems['day rollups: page views'] = { rollups: a.rollups.pageviews, stream: pageviews };
  if (a.rollups.visits !== a.visitItems)
    problems['day rollups: visits'] = { rollups: a.rollups.visits, visitItems: a.visitItems };
  return problems;
}
