import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import { safeNext, useAuth } from '../auth.js';
import { Field, inputProps, useFormErrors } from '../components/ui.js';

/** `/sign-in?next=…`: email and password; on success, back to where the user was going. */
export function SignIn(): JSX.Element {
  const { route, query } = useLocation();
  const { setMe } = useAuth();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const submit = async (e: Event) => {
    e.preventDefault();
    form.clear();
    setBusy(true);
    try {
      setMe(await api.signIn(email.trim(), password));
      route(safeNext(query.next), true);
    } catch (error) {
      form.fromError(error, ['email', 'password']);
      setBusy(false);
    }
  };

  return (
    <main class="auth-page" id="main">
      <form class="auth-card" onSubmit={(e) => void submit(e)} noValidate>
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true" />
          Footfall
        </div>
        <h1>Sign in</h1>
        {form.errors._form ? (
          <p class="form-error" role="alert">
            {form.errors._form}
          </p>
        ) : null}
        <Field label="Email" name="email" error={form.errors.email}>
          <input
            {...inputProps('email', form.errors.email)}
            type="email"
            autocomplete="username"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            required
            autoFocus
          />
        </Field>
        <Field label="Password" name="password" error={form.errors.password}>
          <input
            {...inputProps('password', form.errors.password)}
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </Field>
        <button class="btn btn-primary btn-block" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="hint">
          No account yet? The first user is made with <code>footfall users add</code>; others get an invitation link
          from a teammate.
        </p>
      </form>
    </main>
  );
}
