import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import { useAuth } from '../auth.js';
import { Card, Field, inputProps, useFormErrors } from '../components/ui.js';
import { formatDateTime } from '../format.js';

const MIN_PASSWORD = 10;

/** The signed-in user: change password, sign out. */
export function AccountSection(): JSX.Element {
  const { me, setMe } = useAuth();
  const { route } = useLocation();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const change = async (e: Event) => {
    e.preventDefault();
    form.clear();
    setDone(false);
    if (!current) return form.set('current_password', 'Enter your current password.');
    if (next.length < MIN_PASSWORD) return form.set('new_password', `Use at least ${MIN_PASSWORD} characters.`);
    setBusy(true);
    try {
      await api.changePassword(current, next);
      setCurrent('');
      setNext('');
      setDone(true);
    } catch (error) {
      form.fromError(error, ['current_password', 'new_password']);
    }
    setBusy(false);
  };

  const signOut = async () => {
    await api.signOut().catch(() => undefined);
    setMe(null);
    route('/sign-in');
  };

  return (
    <>
      <Card title="Account">
        <dl class="facts">
          <dt>Email</dt>
          <dd>{me?.user.email}</dd>
          <dt>Account</dt>
          <dd>{me?.account.name}</dd>
          {me?.user.created ? (
            <>
              <dt>User since</dt>
              <dd>{formatDateTime(me.user.created)}</dd>
            </>
          ) : null}
        </dl>
        <button type="button" class="btn" onClick={() => void signOut()}>
          Sign out
        </button>
      </Card>
      <Card title="Change password">
        <form class="stack-form" onSubmit={(e) => void change(e)} noValidate>
          <input type="email" autocomplete="username" value={me?.user.email} hidden readOnly />
          <Field label="Current password" name="current_password" error={form.errors.current_password}>
            <input
              {...inputProps('current_password', form.errors.current_password)}
              type="password"
              autocomplete="current-password"
              value={current}
              onInput={(e) => setCurrent(e.currentTarget.value)}
            />
          </Field>
          <Field
            label="New password"
            name="new_password"
            error={form.errors.new_password}
            hint={`At least ${MIN_PASSWORD} characters.`}
          >
            <input
              {...inputProps('new_password', form.errors.new_password)}
              type="password"
              autocomplete="new-password"
              value={next}
              onInput={(e) => setNext(e.currentTarget.value)}
            />
          </Field>
          {form.errors._form ? (
            <p class="form-error" role="alert">
              {form.errors._form}
            </p>
          ) : null}
          {done ? (
            <p class="notice notice-success" role="status">
              Password changed.
            </p>
          ) : null}
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Change password
          </button>
        </form>
      </Card>
    </>
  );
}
