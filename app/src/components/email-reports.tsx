import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.js';
import { useAuth } from '../auth.js';
import { useData } from '../use-data.js';
import { ErrorBox, Field, Loading, inputProps, useFormErrors } from './ui.js';
import type { Recipient } from '../../../lambdas/services/email-reports.js';
import type { EmailReportsView } from '../../../lambdas/services/email-report-settings.js';

const path = (domain: string) => `/api/app/sites/${encodeURIComponent(domain)}/email-reports`;

/**
 * Site settings, "Email reports" (`docs/app.md`): who receives the weekly and the monthly summary
 * of the site. Owners edit the list (at most `max_recipients`) and save it whole; members see it.
 * While the stack has no verified sender the card says why reports are off.
 */
export function EmailReports(props: { domain: string }): JSX.Element {
  const { me } = useAuth();
  const isOwner = (me?.user.role ?? 'owner') === 'owner';
  const view = useData(() => get<EmailReportsView>(path(props.domain)), `email-reports|${props.domain}`);
  const [list, setList] = useState<Recipient[]>([]);
  const [address, setAddress] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const form = useFormErrors();
  useEffect(() => setList(view.data?.recipients ?? []), [view.data]);

  if (view.error) return <ErrorBox error={view.error} retry={view.reload} />;
  if (!view.data) return <Loading />;
  const { enabled, disabled_reason, from, max_recipients } = view.data;

  const save = async (next: Recipient[]) => {
    form.clear();
    setSaved(false);
    setBusy(true);
    try {
      const answer = await put<EmailReportsView>(path(props.domain), { recipients: next });
      setList(answer.recipients);
      setAddress('');
      setSaved(true);
    } catch (error) {
      form.fromError(error, ['recipients']);
    }
    setBusy(false);
  };
  const add = (e: Event) => {
    e.preventDefault();
    const email = address.trim();
    if (!email) return form.set('recipients', 'Enter an email address.');
    void save([...list, { email, weekly: true, monthly: true }]);
  };
  const toggle = (i: number, kind: 'weekly' | 'monthly') =>
    setList(list.map((r, j) => (j === i ? { ...r, [kind]: !r[kind] } : r)));

  return (
    <div data-email-reports>
      {enabled ? (
        <p class="muted">
          A summary of visitors, visits, pageviews, revenue, top channels, sources, pages and goals, each against the
          period before: weekly on Monday and monthly on the 1st, at 08:00 in the site's timezone, from{' '}
          <code>{from}</code>. Each mail has an unsubscribe link.
        </p>
      ) : (
        <p class="notice" role="status" data-reports-off>
          {disabled_reason}
        </p>
      )}
      {list.length === 0 ? <p class="muted">No recipients yet.</p> : null}
      {list.length > 0 ? (
        <table class="list-table stack-table" data-recipients>
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Weekly</th>
              <th scope="col">Monthly</th>
              {isOwner ? (
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {list.map((r, i) => (
              <tr key={r.email}>
                <td data-label="Address">{r.email}</td>
                {(['weekly', 'monthly'] as const).map((kind) => (
                  <td key={kind} data-label={kind === 'weekly' ? 'Weekly' : 'Monthly'}>
                    <input
                      type="checkbox"
                      aria-label={`${kind === 'weekly' ? 'Weekly' : 'Monthly'} report to ${r.email}`}
                      checked={r[kind]}
                      disabled={!isOwner || busy}
                      onChange={() => toggle(i, kind)}
                    />
                  </td>
                ))}
                {isOwner ? (
                  <td class="actions">
                    <button
                      class="btn btn-small"
                      type="button"
                      disabled={busy}
                      aria-label={`Remove ${r.email}`}
                      onClick={() => void save(list.filter((_, j) => j !== i))}
                    >
                      Remove
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {isOwner ? (
        <form class="stack-form" onSubmit={add} noValidate>
          <Field
            label="Add a recipient"
            name="recipients"
            error={form.errors.recipients}
            hint={`At most ${max_recipients} addresses per site.`}
          >
            <input
              {...inputProps('recipients', form.errors.recipients)}
              type="email"
              autocomplete="email"
              value={address}
              disabled={!enabled}
              onInput={(e) => setAddress(e.currentTarget.value)}
            />
          </Field>
          {form.errors._form ? (
            <p class="form-error" role="alert">
              {form.errors._form}
            </p>
          ) : null}
          {saved ? (
            <p class="notice notice-success" role="status">
              Saved.
            </p>
          ) : null}
          <div class="row">
            <button class="btn btn-primary" type="submit" disabled={busy || !enabled || list.length >= max_recipients}>
              Add
            </button>
            <button class="btn" type="button" disabled={busy} onClick={() => void save(list)}>
              Save choices
            </button>
          </div>
        </form>
      ) : (
        <p data-member-note>Only an owner of the account can change who receives email reports.</p>
      )}
    </div>
  );
}
