import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ShareLink } from '../api.js';
import { useAuth } from '../auth.js';
import { Card, CopyButton, ErrorBox, Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { formatDateTime } from '../format.js';
import { useData } from '../use-data.js';

/**
 * A site's shared links (Plausible's): a read-only view of the dashboard for
 * people without an account, each with a name and optionally a password. The
 * link is shown once (only its token's hash is stored); an owner creates and
 * revokes, a member sees the list.
 */
export function ShareLinksCard(props: { domain: string }): JSX.Element {
  const { me } = useAuth();
  const owner = me?.user.role !== 'member';
  const links = useData(() => api.shares(props.domain), `shares|${props.domain}`);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [created, setCreated] = useState<(ShareLink & { url: string }) | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const create = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!name.trim()) return form.set('share_name', 'Give the link a name, such as who it is for.');
    setBusy(true);
    try {
      setCreated(await api.createShare(props.domain, name.trim(), password));
      setName('');
      setPassword('');
      links.reload();
    } catch (error) {
      const e = error as { field?: string | null };
      // The server names `name` and `password`; the form's inputs carry a prefix (one page, several forms).
      if (e.field === 'name' || e.field === 'password')
        form.set(`share_${e.field}`, error instanceof Error ? error.message : String(error));
      else form.fromError(error, []);
    }
    setBusy(false);
  };

  const revoke = async (link: ShareLink) => {
    if (!confirm(`Revoke the shared link “${link.name}”? Whoever has it sees nothing from the next request on.`))
      return;
    try {
      await api.revokeShare(props.domain, link.id);
      if (created?.id === link.id) setCreated(null);
    } catch (error) {
      alert(error instanceof Error ? error.message : String(error));
    }
    links.reload();
  };

  return (
    <Card title="Shared links">
      <p class="muted">
        A shared link shows this site's dashboard, read only, to anyone who has it: no payments, visitors, settings or
        other sites. Add a password to ask for one first. The link is shown once; only its hash is stored.
      </p>
      {owner ? (
        <form class="inline-form" onSubmit={(e) => void create(e)} noValidate data-share-form>
          <Field label="Name" name="share_name" error={form.errors.share_name}>
            <input
              {...inputProps('share_name', form.errors.share_name)}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              placeholder="e.g. Investors, the team"
              maxLength={100}
            />
          </Field>
          <Field label="Password (optional)" name="share_password" error={form.errors.share_password}>
            <input
              {...inputProps('share_password', form.errors.share_password)}
              type="password"
              autocomplete="new-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              placeholder="at least 10 characters"
            />
          </Field>
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Create link
          </button>
        </form>
      ) : null}
      {form.errors._form ? (
        <p class="form-error" role="alert">
          {form.errors._form}
        </p>
      ) : null}
      {created ? (
        <div class="notice notice-success" data-new-share>
          <p>
            <strong>Copy the link “{created.name}” now.</strong> It will not be shown again.
          </p>
          <div class="copy-row">
            <code class="secret" data-share-url>
              {created.url}
            </code>
            <CopyButton text={created.url} />
          </div>
        </div>
      ) : null}
      {links.error ? <ErrorBox error={links.error} retry={links.reload} /> : null}
      {!links.data && links.loading ? <Loading /> : null}
      {links.data ? (
        links.data.links.length === 0 ? (
          <p class="empty-panel">No shared links.</p>
        ) : (
          <table class="list-table stack-table" data-shares>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Password</th>
                {owner ? (
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {links.data.links.map((l) => (
                <tr key={l.id} data-share-id={l.id}>
                  <td data-label="Name">{l.name}</td>
                  <td data-label="Created">{formatDateTime(l.created)}</td>
                  <td data-label="Password">{l.has_password ? 'Yes' : 'No'}</td>
                  {owner ? (
                    <td class="actions">
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        onClick={() => void revoke(l)}
                        aria-label={`Revoke ${l.name}`}
                      >
                        Revoke
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </Card>
  );
}
