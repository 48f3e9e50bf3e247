import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type AccountUser, type Role } from '../api.js';
import { useAuth } from '../auth.js';
import { Card, CopyButton, ErrorBox, Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { formatDateTime } from '../format.js';
import { useData } from '../use-data.js';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: manages sites, payment providers, API keys and users',
  member: 'Member: reads every report, changes nothing but their own password',
};

/** Users of the account and their roles: an owner invites (a one-time link to pass on), changes roles, removes. */
export function UsersSection(): JSX.Element {
  const { me } = useAuth();
  const users = useData(() => api.users(), 'users');
  const isOwner = (me?.user.role ?? 'owner') === 'owner';
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
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
      setInvited(await api.inviteUser(email.trim(), role));
      setEmail('');
      users.reload();
    } catch (error) {
      form.fromError(error, ['email']);
    }
    setBusy(false);
  };

  const changeRole = async (u: AccountUser, next: Role) => {
    try {
      await api.setRole(u.email, next);
    } catch (error) {
      alert(error instanceof Error ? error.message : String(error));
    }
    users.reload();
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
          Everyone here sees every site of the account. Owners manage sites, payment providers, API keys and users;
          members read the reports. An account always keeps one owner. Footfall sends no email: pass the invitation link
          on yourself.
        </p>
        {isOwner ? (
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
            <Field label="Role" name="role">
              <select id="f-role" name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                <option value="member">Member</option>
                <option value="owner">Owner</option>
              </select>
            </Field>
            <button class="btn btn-primary" type="submit" disabled={busy}>
              Invite
            </button>
          </form>
        ) : (
          <p data-member-note>Only an owner of the account can invite users or change roles.</p>
        )}
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
                <th scope="col">Role</th>
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
                  <td data-label="Role">
                    {isOwner ? (
                      <select
                        aria-label={`Role of ${u.email}`}
                        title={ROLE_TEXT[u.role]}
                        value={u.role}
                        onChange={(e) => void changeRole(u, e.currentTarget.value as Role)}
                      >
                        <option value="owner">Owner</option>
                        <option value="member">Member</option>
                      </select>
                    ) : (
                      <span title={ROLE_TEXT[u.role]}>{u.role === 'owner' ? 'Owner' : 'Member'}</span>
                    )}
                  </td>
                  <td data-label="Status">{u.status === 'invited' ? 'Invited, no password yet' : 'Active'}</td>
                  <td data-label="Since">{formatDateTime(u.created)}</td>
                  <td class="actions">
                    {isOwner && u.email !== me?.user.email ? (
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
