import type { ComponentChildren, JSX } from 'preact';
import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import { useAuth } from '../auth.js';
import { useShared } from '../shared.js';

/** The frame of every signed-in page: the top bar with the account and the way out. */
export function Layout(props: { children: ComponentChildren }): JSX.Element {
  const { me, setMe } = useAuth();
  const { route, path } = useLocation();
  const signOut = async () => {
    await api.signOut().catch(() => undefined);
    setMe(null);
    route('/sign-in');
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/">
          <span class="logo" aria-hidden="true" />
          Footfall
        </a>
        <nav class="topnav" aria-label="Main">
          <a href="/" aria-current={path === '/' ? 'page' : undefined}>
            Sites
          </a>
          <a href="/settings" aria-current={path.startsWith('/settings') ? 'page' : undefined}>
            Settings
          </a>
        </nav>
        <div class="account">
          <span class="who" title={me?.account.name}>
            {me?.user.email}
          </span>
          <button type="button" class="btn btn-ghost btn-small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}

/** The heading of a site's pages with the tabs between them; in a shared view, the site and the shared-view marker only. */
export function SiteHeader(props: {
  domain: string;
  search: string;
  current: 'dashboard' | 'payments' | 'retention' | 'visitor';
  children?: ComponentChildren;
}): JSX.Element {
  const shared = useShared();
  if (shared)
    return (
      <div class="site-header">
        <div class="site-title">
          <h1>{props.domain}</h1>
          <p class="shared-marker" data-shared-view>
            Shared view · {shared.name} · read only
          </p>
        </div>
        {props.children}
      </div>
    );
  const base = `/sites/${encodeURIComponent(props.domain)}`;
  const tabs = [
    { id: 'dashboard', href: `${base}${props.search}`, label: 'Dashboard' },
    { id: 'payments', href: `${base}/payments${props.search}`, label: 'Payments' },
    { id: 'retention', href: `${base}/retention${props.search}`, label: 'Retention' },
  ];
  return (
    <div class="site-header">
      <div class="site-title">
        <h1>{props.domain}</h1>
        <nav class="tabs" aria-label="Site">
          {tabs.map((t) => (
            <a key={t.id} href={t.href} aria-current={props.current === t.id ? 'page' : undefined}>
              {t.label}
            </a>
          ))}
          <a href={`/settings/sites/${encodeURIComponent(props.domain)}`}>Site settings</a>
        </nav>
      </div>
      {props.children}
    </div>
  );
}
