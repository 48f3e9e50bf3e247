import type { JSX } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { api, type ImportJob, type ProviderName } from '../api.js';
import { useAuth } from '../auth.js';
import { ErrorBox, Field, inputProps, useFormErrors } from '../components/ui.js';
import { formatAgo, formatDateTime, plural } from '../format.js';
import { useData } from '../use-data.js';
import { useVisiblePoll } from '../use-poll.js';

/** Where each provider makes the read-only key an import needs, and what it looks like (docs/payments.md, "Importing a provider's history"). */
const KEYS: Record<ProviderName, { where: string; placeholder: string }> = {
  stripe: {
    where:
      'Developers → API keys → Create restricted key, with Read on Customers, Subscriptions, Checkout Sessions, Payment Intents, Invoices and Charges.',
    placeholder: 'rk_live_…',
  },
  lemonsqueezy: {
    where: 'Settings → API → add an API key (it cannot be limited: delete it after the import).',
    placeholder: 'eyJ…',
  },
  paddle: {
    where:
      'Developer tools → Authentication → New API key, with only transaction.read, adjustment.read and subscription.read.',
    placeholder: 'pdl_live_apikey_…',
  },
  polar: {
    where: 'Settings → Developers → New token, with orders:read and subscriptions:read.',
    placeholder: 'polar_oat_…',
  },
};

/** How often a running import's progress is read while the page is visible, ms. */
const POLL_MS = 2_000;

const STATUS: Record<ImportJob['status'], string> = { running: 'Importing…', done: 'Imported', failed: 'Stopped' };

function Progress(props: { job: ImportJob }): JSX.Element {
  const { job } = props;
  const c = job.counts;
  const range = job.since || job.until ? ` (${job.since ?? 'the start'} to ${job.until ?? 'now'})` : '';
  return (
    <div class="import-progress" data-import-status={job.status} aria-live="polite">
      <p>
        <strong>{job.stalled ? 'Stalled' : STATUS[job.status]}</strong>
        {range}: {plural(c.read, 'object')} read, <span data-import-imported>{c.imported}</span> imported, {c.skipped}{' '}
        with nothing to import, {c.failed} not readable.{' '}
        <span class="muted small">
          Started {formatDateTime(job.started)} by {job.by}; last progress {formatAgo(job.updated)}.
        </span>
      </p>
      {job.status === 'done' ? (
        <p class="ok small">Every list is read. Payments are credited to their visits; the reports include them now.</p>
      ) : null}
      {job.stalled ? (
        <p class="warn small">
          No progress for 20 minutes: paste the key again and import to continue where it stopped.
        </p>
      ) : null}
      {job.error ? (
        <p class="form-error" role="alert" data-import-error>
          {job.error} Paste a key again and import to continue where it stopped.
        </p>
      ) : null}
      {job.invalid.length > 0 ? (
        <ul class="small muted" aria-label="Objects not read">
          {job.invalid.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/**
 * Site settings → a payment provider → Import history (`docs/payments.md`, "Importing a provider's
 * history"): a read-only key, an optional range of days, Import; the job's counts while it runs (read
 * while the page is visible), its result or its error. Starting again after a stop continues at the
 * list and page where it stopped. Owners import; members see the progress.
 */
export function ImportHistory(props: { domain: string; provider: ProviderName; label: string }): JSX.Element {
  const { me } = useAuth();
  const isOwner = (me?.user.role ?? 'owner') === 'owner';
  const status = useData(() => api.importJob(props.domain, props.provider), `import|${props.domain}|${props.provider}`);
  const [key, setKey] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();
  const job = status.data?.job ?? null;
  const running = job?.status === 'running' && !job.stalled;
  const poll = useCallback(() => status.reload(), [status.reload]);
  useVisiblePoll(poll, running ? POLL_MS : null);
  const info = KEYS[props.provider];

  const start = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!key.trim()) return form.set('api_key', `Paste a read-only API key from ${props.label}.`);
    setBusy(true);
    try {
      await api.startImport(props.domain, props.provider, { api_key: key.trim(), since, until });
      setKey('');
      status.reload();
    } catch (error) {
      form.fromError(error, ['api_key', 'since', 'until']);
    }
    setBusy(false);
  };

  const id = (name: string) => `${props.provider}-${name}`;
  return (
    <section class="import-history" data-import-history={props.provider} aria-labelledby={id('import-title')}>
      <h3 id={id('import-title')} class="small-heading">
        Import history
      </h3>
      <p class="muted small">
        Reads {props.label}'s past payments, refunds, customers and subscriptions through its API and credits them as
        their webhooks would have. The key is stored encrypted while the import runs and deleted when it ends.
      </p>
      {status.error ? <ErrorBox error={status.error} retry={status.reload} /> : null}
      {job ? <Progress job={job} /> : null}
      {isOwner && !running ? (
        <form class="stack-form" onSubmit={(e) => void start(e)} noValidate>
          <Field label="Read-only API key" name={id('api_key')} error={form.errors.api_key} hint={info.where}>
            <input
              {...inputProps(id('api_key'), form.errors.api_key)}
              type="password"
              autocomplete="off"
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
              placeholder={info.placeholder}
            />
          </Field>
          <div class="field-row">
            <Field label="From (optional)" name={id('since')} error={form.errors.since}>
              <input
                {...inputProps(id('since'), form.errors.since)}
                type="date"
                value={since}
                onInput={(e) => setSince(e.currentTarget.value)}
              />
            </Field>
            <Field label="Until (optional)" name={id('until')} error={form.errors.until}>
              <input
                {...inputProps(id('until'), form.errors.until)}
                type="date"
                value={until}
                onInput={(e) => setUntil(e.currentTarget.value)}
              />
            </Field>
          </div>
          {form.errors._form ? (
            <p class="form-error" role="alert">
              {form.errors._form}
            </p>
          ) : null}
          <button class="btn btn-primary" type="submit" disabled={busy}>
            {job && job.status !== 'done' ? 'Continue the import' : 'Import'}
          </button>
        </form>
      ) : null}
      {!isOwner && !job ? <p class="muted small">Only an owner of the account can import history.</p> : null}
    </section>
  );
}
