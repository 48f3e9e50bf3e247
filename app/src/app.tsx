import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { api, setUnauthorizedHandler, type Me } from './api.js';
import { AuthContext } from './auth.js';
import { SESSION_CHECK, takeEarly } from './early.js';
import { Layout } from './components/layout.js';
import { Loading } from './components/ui.js';
import { SignIn } from './pages/sign-in.js';
import { Invite } from './pages/invite.js';
import { Sites } from './pages/sites.js';
import { Dashboard } from './pages/dashboard.js';
import { PaymentsPage } from './pages/payments.js';
import { VisitorPage } from './pages/visitor.js';
import { RetentionPage } from './pages/retention.js';
import { Settings } from './pages/settings.js';
import { SharedPage } from './pages/shared.js';
import { Unsubscribe } from './pages/unsubscribe.js';

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

function Routes(props: { me: Me | null }): JSX.Element {
  const { path, url, route } = useLocation();
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
  if (needsSignIn) return <Loading />;
  if (isPublic) {
    return (
      <Router>
        <Route path="/sign-in" component={SignIn} />
        <Route path="/invite/:token" component={Invite} />
        <Route path="/share/:domain" component={SharedPage} />
        <Route path="/unsubscribe/:token" component={Unsubscribe} />
      </Router>
    );
  }
  return (
    <Layout>
      <Router>
        <Route path="/" component={Sites} />
        <Route path="/sites/:domain" component={Dashboard} />
        <Route path="/sites/:domain/payments" component={PaymentsPage} />
        <Route path="/sites/:domain/visitors/:visitor" component={VisitorPage} />
        <Route path="/sites/:domain/retention" component={RetentionPage} />
        <Route path="/settings" component={Settings} />
        <Route path="/settings/:section" component={Settings} />
        <Route path="/settings/:section/:item" component={Settings} />
        <Route default component={NotFound} />
      </Router>
    </Layout>
  );
}

/** The app: who is signed in, then the routes (docs/app.md lists them). */
export function App(): JSX.Element {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  useEffect(() => {
    // Started by start.ts as the script began; a 401 is the answer, not asked again.
    takeEarly(SESSION_CHECK, api.me, false).then(setMe, () => setMe(null));
  }, []);
  return (
    <AuthContext.Provider value={{ me: me ?? null, setMe }}>
      <LocationProvider>{me === undefined ? <Loading /> : <Routes me={me} />}</LocationProvider>
    </AuthContext.Provider>
  );
}
