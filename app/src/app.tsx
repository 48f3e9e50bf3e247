import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, setUnauthorizedHandler, type Me } from './api.js';
import { AuthContext } from './auth.js';
import { SESSION_CHECK, takeEarly } from './early.js';
import { Layout } from './components/layout.js';
import { Loading } from './components/ui.js';
import { rememberCapabilities } from './known-capabilities.js';
import { pageShown, preloadOnIntent, PUBLIC_ROUTES, SIGNED_IN_ROUTES } from './pages.js';

/** Routes anyone may open; every other route needs a session. A shared view (`/share/…`) needs its link instead. */
const PUBLIC = [/^\/sign-in$/, /^\/invite\//, /^\/share\//, /^\/unsubscribe\//];

function NotFound(): JSX.Element {
  return (
    <div class="page narrow">
      <h1>Page not found</h1>
      <p>
        <a href="/">Back to your sites</a>
      </p>
    </div>
  );
}

/** A page whose code is loading: its address, and whether no page was on screen before it. */
type PageLoad = { url: string; first: boolean };

/**
 * While a page's code loads (`pages.tsx`): on the app's first page, the same "Loading…" the session check
 * showed, in the page's place; on a later one, the page that was on screen stays (the router keeps it) under a
 * bar along the top of the window, which takes no room, so nothing below it moves. Shown for the address
 * whose page is loading only: a router left for another address (signed out, say) does not leave it behind.
 * Its state is its own, set through `control`: a render of the router's parent while a page loads would make
 * the router drop the page it keeps.
 * @param url the current address (path and query), as the router reports it
 */
function PageLoading(props: {
  url: string;
  control: { current: (load: PageLoad | null) => void };
}): JSX.Element | null {
  const [load, setLoad] = useState<PageLoad | null>(null);
  // Set as it renders, before the router beside it: a page's first render may start loading at once.
  props.control.current = setLoad;
  if (load?.url !== props.url) return null;
  return load.first ? (
    <div data-page-loading>
      <Loading />
    </div>
  ) : (
    <div class="page-progress" role="status" aria-label="Loading the page" data-page-progress />
  );
}

/** The router's load events, told to `PageLoading` through `control`. */
function usePageLoading(url: string) {
  const control = useRef<(load: PageLoad | null) => void>(() => undefined);
  return {
    indicator: <PageLoading url={url} control={control} />,
    onLoadStart: (at: string) => control.current({ url: at, first: !pageShown() }),
    onLoadEnd: () => control.current(null),
  };
}

function Routes(props: { me: Me | null }): JSX.Element {
  const { path, url, route } = useLocation();
  const loading = usePageLoading(url);
  const isPublic = PUBLIC.some((p) => p.test(path));
  const needsSignIn = !props.me && !isPublic;
  useEffect(() => {
    if (needsSignIn) route(`/sign-in?next=${encodeURIComponent(url)}`, true);
  }, [needsSignIn, url, route]);
  useEffect(() => {
    setUnauthorizedHandler(() =>
      route(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true),
    );
  }, [route]);
  useEffect(() => {
    // A new page starts at the top with focus on its content, as a page load would.
    if (!isPublic) document.getElementById('main')?.focus({ preventScroll: true });
  }, [path, isPublic]);
  useEffect(() => preloadOnIntent(), []);
  if (needsSignIn) return <Loading />;
  // Unkeyed, as written out: a key per route would remount a page whose address moves to a sibling route.
  const routes: JSX.Element[] = (isPublic ? PUBLIC_ROUTES : SIGNED_IN_ROUTES).map(([path, Page]) => (
    <Route path={path} component={Page} />
  ));
  if (!isPublic) routes.push(<Route default component={NotFound} />);
  const pages = (
    <>
      {loading.indicator}
      <Router onLoadStart={loading.onLoadStart} onLoadEnd={loading.onLoadEnd}>
        {routes}
      </Router>
    </>
  );
  return isPublic ? pages : <Layout>{pages}</Layout>;
}

/** The app: who is signed in, then the routes (docs/app.md lists them). */
export function App(): JSX.Element {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  // Who is signed in, and what the deployment answers, kept for the next open's early requests.
  const learn = (signedIn: Me | null) => {
    if (signedIn) rememberCapabilities(signedIn.capabilities);
    setMe(signedIn);
  };
  useEffect(() => {
    // Started by start.ts as the script began; a 401 is the answer, not asked again.
    takeEarly(SESSION_CHECK, api.me, false).then(learn, () => setMe(null));
  }, []);
  return (
    <AuthContext.Provider value={{ me: me ?? null, setMe: learn }}>
      <LocationProvider>{me === undefined ? <Loading /> : <Routes me={me} />}</LocationProvider>
    </AuthContext.Provider>
  );
}
