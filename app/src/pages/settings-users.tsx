import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type AccountUser } from '../api.js';
import { useAuth } from '../auth.js';
import { Card, CopyButton, ErrorBox, Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { formatDateTime } from '../format.js';
import { useData } from '../use-data.js';

/** Users of the account: invite by email (a one-time link to pass on), remove. */
export function UsersSection(): JSX.Element {
  const { me } = useAuth();
  const users = useData(() => api.users(), 'users');
  const [email, setEmail] = useState('');
  const [invited, setInvited] = useState<{ email: string; invite_url: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const invite = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()))
      return form.set('email', 'Enter an email address, such as ana@example.com.');
    setBusy(true);
    try {
      setInvited(await api.inviteUser(email.trim()));
      setEmail('');
      users.reload();
    } catch (error) {
      form.fromError(error, ['email']);
    }
    setBusy(false);
  };

  const remove = async (u: AccountUser) => {
    if (!confirm(`Remove ${u.email} from this account? Their sessions end at once.`)) return;
    try {
      await api.removeUser(u.email);
    } catch (error) {
      alert(error instanceof Error ? error.message : String(error));
    }
    users.reload();
  };

  return (
    <>
      <Card title="Users">
        <p class="muted">
          Everyone here sees every site of the account and can change its settings. Footfall sends no email: pass the
          invitation link on yourself.
        </p>
        <form class="inline-form" onSubmit={(e) => void invite(e)} noValidate>
          <Field label="Email" name="email" error={form.errors.email}>
            <input
              {...inputProps('email', form.errors.email)}
              type="email"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              placeholder="teammate@example.com"
            />
          </Field>
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Invite
          </button>
        </form>
        {form.errors._form ? (
          <p class="form-error" role="alert">
            {form.errors._form}
          </p>
        ) : null}
        {invited ? (
          <div class="notice notice-success" data-invite>
            <p>
              Send this one-time link to <strong>{invited.email}</strong>; it sets their password and signs them in.
            </p>
            <div class="copy-row">
              <code class="secret">{invited.invite_url}</code>
              <CopyButton text={invited.invite_url} />
            </div>
          </div>
        ) : null}
      </Card>
      <Card>
        {users.error ? <ErrorBox error={users.error} retry={users.reload} /> : null}
        {!users.data && users.loading ? <Loading /> : null}
        {users.data ? (
          <table class="list-table stack-table" data-users>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Since</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((u) => (
                <tr key={u.email} data-user={u.email}>
                  <td data-label="Email">
                    {u.email}
                    {u.email === me?.user.email ? <span class="tag">you</span> : null}
                  </td>
                  <td data-label="Status">{u.status === 'invited' ? 'Invited, no password yet' : 'Active'}</td>
                  <td data-label="Since">{formatDateTime(u.created)}</td>
                  <td class="actions">
                    {u.email !== me?.user.email ? (
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        onClick={() => void remove(u)}
                        aria-label={`Remove ${u.email}`}
                      >
                        Remove
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Card>
    </>
  );
}
