import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, type ErasureKind, type ErasureStatus } from '../api.js';
import { useAuth } from '../auth.js';
import { ConfirmDomain } from '../components/confirm-domain.js';
import { ErrorBox, Field, inputProps, useFormErrors } from '../components/ui.js';
import { formatDateTime, plural } from '../format.js';
import { useData } from '../use-data.js';
import { useVisiblePoll } from '../use-poll.js';

const KINDS: ReadonlyArray<{ value: ErasureKind; label: string; placeholder: string }> = [
  { value: 'visitor', label: 'Visitor id', placeholder: 'the id on the visitor’s page, or footfall.visitorId()' },
  { value: 'customer', label: 'Customer id (payments)', placeholder: 'cus_… (Stripe), the provider’s customer id' },
  { value: 'email', label: 'Email address', placeholder: 'jo@example.com' },
];

/** How often the progress is read while an erasure runs, ms (the operations function runs every 15 minutes, a step at a time). */
const POLL_MS = 5_000;

function Progress(props: { status: ErasureStatus }): JSX.Element | null {
  const { pending, done } = props.status;
  if (pending.length === 0 && done.length === 0) return null;
  return (
    <ul class="erasures" data-erasures>
      {pending.map((p) => (
        <li key={p.id} data-erasure={p.status}>
          {p.kind === 'visitor' ? 'A visitor' : 'A customer'}, asked {formatDateTime(p.requested)}:{' '}
          <strong>{p.status === 'pending' ? 'pending' : `running ${p.percent}%`}</strong>{' '}
          <span class="muted">({p.phase})</span>
          {p.error ? <span class="warn"> {p.error}</span> : null}
        </li>
      ))}
      {done.map((d) => (
        <li key={d.at} data-erasure="done">
          {d.kind === 'visitor' ? 'A visitor' : 'A customer'}: <strong>done</strong> {formatDateTime(d.at)}:{' '}
          {plural(d.visitors, 'visitor id')}, {plural(d.visit_items, 'visit item')}, {plural(d.payments, 'payment')} and{' '}
          {plural(d.customers, 'customer')} anonymised, {plural(d.archive_events, 'archived event')} removed; reports
          rebuilt.
        </li>
      ))}
    </ul>
  );
}

/**
 * Site settings › Erase a person (GDPR Art. 17, CCPA; docs/security.md,
 * "Erasing a person"): by visitor id or customer id, the domain typed to
 * confirm; the scheduled function carries it out, and its progress is shown
 * here. `initial` fills the visitor id (from a visitor's page).
 */
export function ErasePerson(props: { domain: string; initial?: string }): JSX.Element {
  const { me } = useAuth();
  const isOwner = (me?.user.role ?? 'owner') === 'owner';
  const status = useData(() => api.erasures(props.domain), `erasures|${props.domain}`);
  const [kind, setKind] = useState<ErasureKind>('visitor');
  const [id, setId] = useState(props.initial ?? '');
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [asked, setAsked] = useState(false);
  const form = useFormErrors();
  const running = (status.data?.pending.length ?? 0) > 0;
  useVisiblePoll(() => status.reload(), running ? POLL_MS : null);

  const erase = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!id.trim()) return form.set('id', 'Enter the id.');
    setBusy(true);
    try {
      await api.erase(props.domain, kind, id.trim(), typed);
      setAsked(true);
      setId('');
      setTyped('');
      status.reload();
    } catch (error) {
      form.fromError(error, ['kind', 'id', 'confirm']);
    }
    setBusy(false);
  };
  const chosen = KINDS.find((k) => k.value === kind) ?? KINDS[0]!;
  return (
    <div id="erase">
      <p>
        Erases one person from <strong>{props.domain}</strong>: their visits and timeline, their ids on payments, and
        their events in the raw archive; the reports are then rebuilt. Totals keep their payments’ money (under a random
        customer id) but nothing that leads back to them. It runs in the background: at least half an hour once deployed
        (events already sent must reach the archive first), and about four hours per million archived events for the
        rebuild; its progress shows below.
      </p>
      {status.error ? <ErrorBox error={status.error} retry={status.reload} /> : null}
      {status.data ? <Progress status={status.data} /> : null}
      {asked ? (
        <p class="notice notice-success" role="status">
          Erasure requested. Its progress shows above.
        </p>
      ) : null}
      {isOwner ? (
        <form class="stack-form" onSubmit={(e) => void erase(e)} noValidate data-erase-form>
          <Field label="Erase by" name="kind" error={form.errors.kind}>
            <select
              {...inputProps('kind', form.errors.kind)}
              value={kind}
              onChange={(e) => setKind(e.currentTarget.value as ErasureKind)}
            >
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </Field>
          {kind === 'email' ? (
            <p class="muted small">
              Footfall stores no email addresses: payments keep the provider’s customer id. Find the customer by email
              at the provider (Stripe: Customers, search the email), then erase by customer id.
            </p>
          ) : null}
          <Field label={chosen.label} name="id" error={form.errors.id}>
            <input
              {...inputProps('id', form.errors.id)}
              autocomplete="off"
              placeholder={chosen.placeholder}
              value={id}
              onInput={(e) => setId(e.currentTarget.value)}
            />
          </Field>
          <ConfirmDomain
            domain={props.domain}
            typed={typed}
            setTyped={setTyped}
            errors={form.errors}
            busy={busy}
            action="Erase this person"
          />
        </form>
      ) : (
        <p class="muted">Only an owner of the account can erase a person.</p>
      )}
    </div>
  );
}
