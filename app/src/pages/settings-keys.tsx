import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ApiKey } from '../api.js';
import { Card, CopyButton, ErrorBox, Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { formatAgo, formatDateTime } from '../format.js';
import { useData } from '../use-data.js';

/** API keys (`docs/security.md` "API keys"): create with a name, shown once; list with created and last used; revoke. */
export function KeysSection(): JSX.Element {
  const keys = useData(() => api.keys(), 'keys');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const create = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!name.trim()) return form.set('name', 'Give the key a name, such as where it will be used.');
    setBusy(true);
    try {
      setCreated(await api.createKey(name.trim()));
      setName('');
      keys.reload();
    } catch (error) {
      form.fromError(error, ['name']);
    }
    setBusy(false);
  };

  const revoke = async (key: ApiKey) => {
    if (!confirm(`Revoke the key “${key.name}”? Programs using it get 401 from the next request on.`)) return;
    try {
      await api.revokeKey(key.id);
      if (created?.id === key.id) setCreated(null);
    } catch (error) {
      alert(error instanceof Error ? error.message : String(error));
    }
    keys.reload();
  };

  return (
    <>
      <Card title="API keys">
        <p class="muted">
          A key reads every site of this account through the report API (<code>/api/v1</code>) and MCP (
          <code>/mcp</code>), and can change nothing. It is shown once; only its hash is stored.
        </p>
        <form class="inline-form" onSubmit={(e) => void create(e)} noValidate>
          <Field label="Name" name="name" error={form.errors.name}>
            <input
              {...inputProps('name', form.errors.name)}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              placeholder="e.g. Claude Code, weekly report"
              maxLength={100}
            />
          </Field>
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Create key
          </button>
        </form>
        {form.errors._form ? (
          <p class="form-error" role="alert">
            {form.errors._form}
          </p>
        ) : null}
        {created ? (
          <div class="notice notice-success" data-new-key>
            <p>
              <strong>Copy the key “{created.name}” now.</strong> It will not be shown again.
            </p>
            <div class="copy-row">
              <code class="secret" data-secret>
                {created.key}
              </code>
              <CopyButton text={created.key} />
            </div>
            <p class="muted small">
              Use it as <code>Authorization: Bearer {created.key.slice(0, 6)}…</code>.
            </p>
          </div>
        ) : null}
      </Card>
      <Card>
        {keys.error ? <ErrorBox error={keys.error} retry={keys.reload} /> : null}
        {!keys.data && keys.loading ? <Loading /> : null}
        {keys.data ? (
          keys.data.keys.length === 0 ? (
            <p class="empty-panel">No keys yet.</p>
          ) : (
            <table class="list-table stack-table" data-keys>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.keys.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td data-label="Name">{k.name}</td>
                    <td data-label="Created">{formatDateTime(k.created)}</td>
                    <td data-label="Last used" title={k.last_used ?? undefined}>
                      {formatAgo(k.last_used)}
                    </td>
                    <td class="actions">
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        onClick={() => void revoke(k)}
                        aria-label={`Revoke ${k.name}`}
                      >
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        ) : null}
      </Card>
    </>
  );
}
