import { h, type AnyComponent, type ComponentType, type JSX } from 'preact';
import { useLayoutEffect } from 'preact/hooks';
import { lazy } from 'preact-iso';

/**
 * The app's pages, each in a chunk of its own that is loaded the first time
 * its route is shown (`docs/app.md` "What loads first"): the script a page
 * load runs first holds the router, the frame and the early requests only, so
 * a dashboard's requests leave before the other pages' code is parsed, and the
 * dashboard's first load fetches no other page's code. A chunk that cannot be
 * loaded (the network dropped, or a deploy replaced the app) shows
 * `PageLoadFailed` in the page's place.
 */

/** Shown instead of a page whose code did not load: what happened and the one way out, a reload. */
function PageLoadFailed(): JSX.Element {
  return (
    <div class="page narrow">
      <div class="error-box" role="alert" data-page-load-failed>
        <p>This page could not be loaded. Check the connection, then reload (Footfall may have been updated).</p>
        <button type="button" class="btn btn-small" onClick={() => location.reload()}>
          Reload
        </button>
      </div>
    </div>
  );
}

let shown = false;

/** Whether a page has been on screen in this tab: until then a loading page has no page to stay behind. */
export function pageShown(): boolean {
  return shown;
}

/** `Page`, noting its first time on screen (`pageShown`). */
function noteShown<P>(Page: ComponentType<P>): ComponentType<P> {
  return function Shown(props: P) {
    useLayoutEffect(() => {
      shown = true;
    }, []);
    return h(Page as ComponentType<object>, props as object);
  };
}

/**
 * A route's page from `load` (a dynamic import), with preact-iso's `lazy`: the router keeps the page on
 * screen until the next one's code is in. A failed load resolves to `PageLoadFailed`, so the router is not
 * left waiting; the failure stays until the page is reloaded.
 */
function page<P>(load: () => Promise<ComponentType<P>>) {
  return lazy(() => load().then(noteShown, () => PageLoadFailed as ComponentType<P>));
}

export const SignIn = page(() => import('./pages/sign-in.js').then((m) => m.SignIn));
export const Invite = page(() => import('./pages/invite.js').then((m) => m.Invite));
export const SharedPage = page(() => import('./pages/shared.js').then((m) => m.SharedPage));
export const Unsubscribe = page(() => import('./pages/unsubscribe.js').then((m) => m.Unsubscribe));
export const Sites = page(() => import('./pages/sites.js').then((m) => m.Sites));
export const Dashboard = page(() => import('./pages/dashboard.js').then((m) => m.Dashboard));
export const PaymentsPage = page(() => import('./pages/payments.js').then((m) => m.PaymentsPage));
export const VisitorPage = page(() => import('./pages/visitor.js').then((m) => m.VisitorPage));
export const RetentionPage = page(() => import('./pages/retention.js').then((m) => m.RetentionPage));
export const Settings = page(() => import('./pages/settings.js').then((m) => m.Settings));

/** A route's page: a component the router renders, whose code `preload` starts loading. */
type RoutePage = AnyComponent<object> & { preload(): Promise<unknown> };

/** The pages anyone may open (`PUBLIC` in `app.tsx`), by route. */
export const PUBLIC_ROUTES: ReadonlyArray<readonly [string, RoutePage]> = [
  ['/sign-in', SignIn],
  ['/invite/:token', Invite],
  ['/share/:domain', SharedPage],
  ['/unsubscribe/:token', Unsubscribe],
];

/** The pages of a signed-in user, in the frame (`Layout`), by route; any other address is `NotFound`. */
export const SIGNED_IN_ROUTES: ReadonlyArray<readonly [string, RoutePage]> = [
  ['/', Sites],
  ['/sites/:domain', Dashboard],
  ['/sites/:domain/payments', PaymentsPage],
  ['/sites/:domain/visitors/:visitor', VisitorPage],
  ['/sites/:domain/retention', RetentionPage],
  ['/settings', Settings],
  ['/settings/:section', Settings],
  ['/settings/:section/:item', Settings],
];

/** Each route as the pattern of the addresses it matches (a `:param` is one path segment), with its page. */
const BY_PATH = [...PUBLIC_ROUTES, ...SIGNED_IN_ROUTES].map(
  ([route, Page]) => [new RegExp(`^${route.replace(/:[^/]+/g, '[^/]+')}$`), Page] as const,
);

/**
 * Starts loading the code of the page at `path` (an address's pathname), if it is one of the app's; a
 * page already loaded or loading is not asked again. The app calls it for the address it opens on, beside
 * the session check, and for a link the pointer or the focus reaches, ahead of the click.
 */
export function preloadPage(path: string): void {
  const found = BY_PATH.find(([pattern]) => pattern.test(path));
  // A failed load already resolved to PageLoadFailed: nothing is left to reject.
  if (found) void found[1].preload();
}

/**
 * Loads a page's code when a same-origin link to it is hovered, focused or touched, so that following the
 * link rarely waits for it. Returns the function that stops listening.
 */
export function preloadOnIntent(root: Document = document): () => void {
  const onIntent = (event: Event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!(link instanceof HTMLAnchorElement) || link.origin !== location.origin) return;
    preloadPage(link.pathname);
  };
  const kinds = ['pointerover', 'focusin', 'touchstart'] as const;
  for (const kind of kinds) root.addEventListener(kind, onIntent, { passive: true });
  return () => {
    for (const kind of kinds) root.removeEventListener(kind, onIntent);
  };
}
