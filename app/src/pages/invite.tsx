import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../api.js';
import { useAuth } from '../auth.js';
import { Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { useData } from '../use-data.js';

/** The shortest password the app asks for; the server's own rule is the one that counts. */
const MIN_PASSWORD = 10;

/**
 * `/invite/<token>`: the one-time link from `footfall users add` or an
 * invitation; the user sets a password and is signed in.
 */
export function Invite(): JSX.Element {
  const { params } = useRoute();
  const token = params.token ?? '';
  const { route } = useLocation();
  const { setMe } = useAuth();
  const invite = useData(() => api.invite(token), token);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const submit = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (password.length < MIN_PASSWORD) return form.set('password', `Use at least ${MIN_PASSWORD} characters.`);
    if (password !== confirm) return form.set('confirm', 'The two passwords differ.');
    setBusy(true);
    try {
      setMe(await api.acceptInvite(token, password));
      route('/', true);
    } catch (error) {
      form.fromError(error, ['password']);
      setBusy(false);
    }
  };

  const account = invite.data
    ? typeof invite.data.account === 'string'
      ? invite.data.account
      : invite.data.account.name
    : '';
  return (
    <main class="auth-page" id="main">
      <form class="auth-card" onSubmit={(e) => void submit(e)} noValidate>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true" />
          Footfall
        </div>
        {invite.loading && !invite.data ? <Loading /> : null}
        {invite.error ? (
          <>
            <h1>This link has expired</h1>
            <p>
              Invitation links work once and for a limited time. Ask a teammate for a new one, or sign in if you already
              set a password.
            </p>
            <a class="btn btn-primary btn-block" href="/sign-in">
              Go to sign-in
            </a>
          </>
        ) : null}
        {invite.data ? (
          <>
            <h1>Set your password</h1>
            <p>
              You are joining <strong>{account}</strong> as <strong>{invite.data.email}</strong>.
            </p>
            {form.errors._form ? (
              <p class="form-error" role="alert">
                {form.errors._form}
              </p>
            ) : null}
            <input type="email" autocomplete="username" value={invite.data.email} hidden readOnly />
            <Field
              label="New password"
              name="password"
              error={form.errors.password}
              hint={`At least ${MIN_PASSWORD} characters.`}
            >
              <input
                {...inputProps('password', form.errors.password)}
                type="password"
                autocomplete="new-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
                required
                autoFocus
              />
            </Field>
            <Field label="Repeat it" name="confirm" error={form.errors.confirm}>
              <input
                {...inputProps('confirm', form.errors.confirm)}
                type="password"
                autocomplete="new-password"
                value={confirm}
                onInput={(e) => setConfirm(e.currentTarget.value)}
                required
              />
            </Field>
            <button class="btn btn-primary btn-block" type="submit" disabled={busy}>
              {busy ? 'Saving…' : 'Set password and sign in'}
            </button>
          </>
        ) : null}
      </form>
    </main>
  );
}
