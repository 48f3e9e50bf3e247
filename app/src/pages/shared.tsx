import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, setSharedLink, type OpenedShare } from '../api.js';
import { Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { SharedContext } from '../shared.js';
import { Dashboard } from './dashboard.js';

/**
 * Where a tab keeps its link's token once read from the address: the range
 * links and a reload drop the fragment (`#auth=…`), and the token must not
 * move into the path or query, which requests and logs carry.
 */
const storageKey = (domain: string) => `ff_share:${domain}`;

function linkToken(domain: string): string {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('auth');
  if (fromHash) {
    sessionStorage.setItem(storageKey(domain), fromHash);
    // Out of the address bar, so a copied address or a screenshot does not carry it.
    history.replaceState(history.state, '', location.pathname + location.search);
    return fromHash;
  }
  return sessionStorage.getItem(storageKey(domain)) ?? '';
}

type State =
  | { kind: 'opening' }
  | { kind: 'refused'; message: string }
  | { kind: 'locked'; opened: OpenedShare }
  | { kind: 'open'; opened: OpenedShare };

/** The frame of a shared view: the brand, no account, no navigation to the app. */
function SharedFrame(props: { children: JSX.Element }): JSX.Element {
  return (
    <>
      <header class="topbar">
        <span class="brand">
          <span class="logo" aria-hidden="true" />
          Footfall
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}

function PasswordForm(props: { token: string; opened: OpenedShare; onOpen(o: OpenedShare): void }): JSX.Element {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();
  const submit = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!password) return form.set('password', 'Enter the password of this link.');
    setBusy(true);
    try {
      props.onOpen(await api.openShared(props.token, password));
    } catch (error) {
      form.fromError(error, ['password']);
      setBusy(false);
    }
  };
  return (
    <main class="auth-page" id="main">
      <form class="auth-card" onSubmit={(e) => void submit(e)} noValidate data-share-password>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true" />
          Footfall
        </div>
        <h1>{props.opened.site.domain}</h1>
        <p>“{props.opened.name}” is a shared view of this site’s dashboard, protected by a password.</p>
        {form.errors._form ? (
          <p class="form-error" role="alert">
            {form.errors._form}
          </p>
        ) : null}
        <Field label="Password" name="password" error={form.errors.password}>
          <input
            {...inputProps('password', form.errors.password)}
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
            autoFocus
          />
        </Field>
        <button class="btn btn-primary btn-block" type="submit" disabled={busy}>
          {busy ? 'Opening…' : 'Open the dashboard'}
        </button>
      </form>
    </main>
  );
}

/**
 * `/share/<domain>#auth=<token>` (docs/app.md "Shared links"): the site's
 * dashboard, read only, through the same report API with the link's token;
 * a password form first for a protected link; a message once the link is
 * revoked (any 401 of its requests).
 */
export function SharedPage(): JSX.Element {
  const { params } = useRoute();
  const { route } = useLocation();
  const domain = params.domain ?? '';
  const [token] = useState(() => linkToken(domain));
  const [state, setState] = useState<State>({ kind: 'opening' });
  useEffect(() => {
    setSharedLink({ token, refused: (message) => setState({ kind: 'refused', message }) });
    api.openShared(token).then(
      (opened) => {
        // The site's own spelling of its domain: report paths (and a protected link's cookie path) use it.
        if (opened.site.domain !== domain)
          route(`/share/${encodeURIComponent(opened.site.domain)}${location.search}`, true);
        setState({ kind: opened.unlocked ? 'open' : 'locked', opened });
      },
      (error: unknown) =>
        setState({ kind: 'refused', message: error instanceof Error ? error.message : String(error) }),
    );
    return () => setSharedLink(null);
  }, [token]);
  if (state.kind === 'opening') return <Loading />;
  if (state.kind === 'locked')
    return (
      <PasswordForm
        token={token}
        opened={state.opened}
        onOpen={(opened) => setState({ kind: opened.unlocked ? 'open' : 'locked', opened })}
      />
    );
  if (state.kind === 'refused')
    return (
      <SharedFrame>
        <div class="page narrow">
          <h1>This link does not open a dashboard</h1>
          <p class="error-box" role="alert" data-share-refused>
            {token ? state.message : 'The address has no link token: open the whole link you were given.'}
          </p>
        </div>
      </SharedFrame>
    );
  return (
    <SharedContext.Provider value={{ name: state.opened.name, capabilities: state.opened.capabilities }}>
      <SharedFrame>
        <Dashboard />
      </SharedFrame>
    </SharedContext.Provider>
  );
}
