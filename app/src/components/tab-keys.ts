/** The tab a key moves to in a tab list of `count` tabs from `at` (WAI-ARIA APG tabs: arrows wrap, Home/End go to the ends); null for other keys. */
export function tabKeyTarget(key: string, at: number, count: number): number | null {
  const moves: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: count - 1 };
  const next = moves[key];
  return next === undefined ? null : (next + count) % count;
}
