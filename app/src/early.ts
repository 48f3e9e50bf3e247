/**
 * Requests a page's first render will make, started as soon as the app's
 * script runs instead of after the session check (`api.me`) resolves and the
 * page mounts: the dashboard's totals and chart then travel beside the
 * session check, not one round trip behind it (`docs/app.md` "Site dashboard").
 */
const started = new Map<string, Promise<unknown>>();

/** The key of the session check (`api.me`), started by `start.ts` and taken by the app's first render. */
export const SESSION_CHECK = 'me';

/** Starts `load` now and keeps its answer for the first `takeEarly` of `key`. */
export function startEarly(key: string, load: () => Promise<unknown>): void {
  const answer = load();
  // Nobody may ever take it (the user is not signed in, or leaves first): its failure is not an unhandled one.
  answer.catch(() => undefined);
  started.set(key, answer);
}

/**
 * The answer started early under `key`, once (a later load of the same key
 * asks the server again), else `load()`. An early request that failed is
 * asked again unless `askAgain` is false: it may have run before the user
 * signed in (a 401 the sign-in page has since resolved). The session check
 * is not asked again: its 401 is the answer.
 */
export function takeEarly<T>(key: string, load: () => Promise<T>, askAgain = true): Promise<T> {
  const answer = started.get(key) as Promise<T> | undefined;
  started.delete(key);
  if (!answer) return load();
  return askAgain ? answer.catch(() => load()) : answer;
}
