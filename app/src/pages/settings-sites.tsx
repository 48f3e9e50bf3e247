import { ConfirmDomain } from '../components/confirm-domain.js';
import { EmailReports } from '../components/email-reports.js';
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type AppSite, type Attribution, type Provider, type ProviderName } from '../api.js';
import { Card, CopyButton, ErrorBox, Field, inputProps, Loading, useFormErrors } from '../components/ui.js';
import { formatAgo, formatDateTime } from '../format.js';
import { useData } from '../use-data.js';
import { ShareLinksCard } from './settings-shares.js';
import { ErasePerson } from './erase-person.js';
import { ImportHistory } from './import-history.js';
import { snippet } from '../snippet.js';

/** The IANA timezones this browser knows, for the timezone choice. */
const TIMEZONES: readonly string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
})();

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Attribution models (`docs/payments.md` "Customers and attribution") as the app names them. */
export const ATTRIBUTION: ReadonlyArray<{ value: Attribution; label: string }> = [
  { value: 'last_non_direct', label: 'Last non-direct visit (default)' },
  { value: 'last_touch', label: 'Last visit' },
  { value: 'first_touch', label: 'First visit' },
];

/** Payment providers, where each keeps its signing secret, and the events to send (docs/payments.md). */
export const PROVIDERS: Record<ProviderName, { label: string; where: string; events: string; placeholder: string }> = {
  stripe: {
    label: 'Stripe',
    where: 'Developers → Webhooks → Add endpoint; then “Signing secret”.',
    events:
      'checkout.session.completed, payment_intent.succeeded, payment_intent.payment_failed, charge.succeeded, charge.failed, charge.refunded, invoice.paid, customer.subscription.*',
    placeholder: 'whsec_…',
  },
  lemonsqueezy: {
    label: 'Lemon Squeezy',
    where: 'Settings → Webhooks → add; the signing secret is the one you type there.',
    events:
      'order_created, order_refunded, subscription_payment_success, subscription_payment_refunded, subscription_*',
    placeholder: 'the signing secret you chose',
  },
  paddle: {
    label: 'Paddle',
    where: 'Developer tools → Notifications → New destination; then its secret key.',
    events: 'transaction.completed, adjustment.created, adjustment.updated, subscription.*',
    placeholder: 'pdl_ntfset_…',
  },
  polar: {
    label: 'Polar',
    where: 'Settings → Webhooks → Add endpoint (format Raw); then its secret.',
    events: 'order.paid, order.created, order.refunded, subscription.*',
    placeholder: 'whsec_… or the secret Polar shows',
  },
};

/**
 * The timezone field: a text box with the browser's IANA zones as suggestions
 * (a native `datalist`, filtered as one types: "berl" finds Europe/Berlin),
 * instead of a select of 400 zones; the server checks the zone (a 400 names
 * the field).
 */
function TimezoneSelect(props: {
  name: string;
  value: string;
  onChange(v: string): void;
  error?: string | null;
}): JSX.Element {
  const list = `${props.name}-zones`;
  return (
    <>
      <input
        {...inputProps(props.name, props.error)}
        type="text"
        list={list}
        autocomplete="off"
        spellcheck={false}
        value={props.value}
        onInput={(e) => props.onChange(e.currentTarget.value.trim())}
      />
      <datalist id={list}>
        {TIMEZONES.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
    </>
  );
}

/** `/settings/sites`: the account's sites, and adding one. */
export function SitesSection(): JSX.Element {
  const sites = useData(() => api.appSites(), 'app-sites');
  const { route } = useLocation();
  const [domain, setDomain] = useState('');
  const [timezone, setTimezone] = useState(browserZone);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const add = async (e: Event) => {
    e.preventDefault();
    form.clear();
    const d = domain
      .trim()
      .toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/\/.*$/, '');
    if (!d) return form.set('domain', 'Enter the domain the tracker runs on, such as example.com.');
    setBusy(true);
    try {
      const site = await api.addSite(d, timezone);
      route(`/settings/sites/${encodeURIComponent(site.domain)}`);
    } catch (error) {
      form.fromError(error, ['domain', 'timezone']);
      setBusy(false);
    }
  };

  return (
    <>
      <Card title="Add a site">
        <form class="inline-form" onSubmit={(e) => void add(e)} noValidate>
          <Field
            label="Domain"
            name="domain"
            error={form.errors.domain}
            hint="Without https://; subdomains count towards it."
          >
            <input
              {...inputProps('domain', form.errors.domain)}
              value={domain}
              onInput={(e) => setDomain(e.currentTarget.value)}
              placeholder="example.com"
              autocapitalize="off"
              spellcheck={false}
            />
          </Field>
          <Field
            label="Timezone"
            name="timezone"
            error={form.errors.timezone}
            hint="Days in reports start at midnight here. Type to search (Berlin, New York); your browser's zone is the default."
          >
            <TimezoneSelect name="timezone" value={timezone} onChange={setTimezone} error={form.errors.timezone} />
          </Field>
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Add site
          </button>
        </form>
        {form.errors._form ? (
          <p class="form-error" role="alert">
            {form.errors._form}
          </p>
        ) : null}
      </Card>
      <Card title="Sites">
        {sites.error ? <ErrorBox error={sites.error} retry={sites.reload} /> : null}
        {!sites.data && sites.loading ? <Loading /> : null}
        {sites.data ? (
          <table class="list-table stack-table" data-sites>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Timezone</th>
                <th scope="col">Last event</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sites.data.sites.map((s) => (
                <tr key={s.domain} data-site={s.domain}>
                  <td data-label="Domain">
                    <a href={`/sites/${encodeURIComponent(s.domain)}`}>{s.domain}</a>
                  </td>
                  <td data-label="Timezone">{s.timezone}</td>
                  <td data-label="Last event">
                    {s.last_event_ts ? formatAgo(s.last_event_ts) : <span class="warn">none yet</span>}
                  </td>
                  <td class="actions">
                    <a class="btn btn-small" href={`/settings/sites/${encodeURIComponent(s.domain)}`}>
                      Settings
                    </a>
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

function SiteForm(props: { site: AppSite; onSaved(site: AppSite): void }): JSX.Element {
  const [timezone, setTimezone] = useState(props.site.timezone);
  const [attribution, setAttribution] = useState<Attribution>(props.site.attribution);
  const [lookback, setLookback] = useState(String(props.site.lookback_days));
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const save = async (e: Event) => {
    e.preventDefault();
    form.clear();
    setSaved(false);
    const days = Number(lookback);
    if (!Number.isInteger(days) || days < 1 || days > 365)
      return form.set('lookback_days', 'A whole number of days from 1 to 365.');
    setBusy(true);
    try {
      props.onSaved(await api.updateSite(props.site.domain, { timezone, attribution, lookback_days: days }));
      setSaved(true);
    } catch (error) {
      form.fromError(error, ['timezone', 'attribution', 'lookback_days']);
    }
    setBusy(false);
  };

  return (
    <form class="stack-form" onSubmit={(e) => void save(e)} noValidate>
      <Field
        label="Timezone"
        name="timezone"
        error={form.errors.timezone}
        hint="Days in reports start at midnight here. Type to search (Berlin, New York); your browser's zone is the default."
      >
        <TimezoneSelect name="timezone" value={timezone} onChange={setTimezone} error={form.errors.timezone} />
      </Field>
      <Field
        label="Attribution model"
        name="attribution"
        error={form.errors.attribution}
        hint="Which visit a payment is credited to."
      >
        <select
          {...inputProps('attribution', form.errors.attribution)}
          value={attribution}
          onChange={(e) => setAttribution(e.currentTarget.value as Attribution)}
        >
          {ATTRIBUTION.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Lookback window (days)"
        name="lookback_days"
        error={form.errors.lookback_days}
        hint="How far before a payment a visit may be to earn it."
      >
        <input
          {...inputProps('lookback_days', form.errors.lookback_days)}
          type="number"
          min={1}
          max={365}
          value={lookback}
          onInput={(e) => setLookback(e.currentTarget.value)}
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
      <button class="btn btn-primary" type="submit" disabled={busy}>
        Save
      </button>
    </form>
  );
}

function ProviderCard(props: { domain: string; provider: Provider; onChange(): void }): JSX.Element {
  const p = props.provider;
  const info = PROVIDERS[p.provider];
  const [open, setOpen] = useState(false);
  const [importing, setImporting] = useState(false);
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useFormErrors();

  const connect = async (e: Event) => {
    e.preventDefault();
    form.clear();
    if (!secret.trim()) return form.set('webhook_secret', `Paste the signing secret from ${info.label}.`);
    setBusy(true);
    try {
      await api.connectProvider(props.domain, p.provider, secret.trim());
      setSecret('');
      setOpen(false);
      props.onChange();
    } catch (error) {
      form.fromError(error, ['webhook_secret']);
    }
    setBusy(false);
  };

  const disconnect = async () => {
    if (!confirm(`Disconnect ${info.label}? Its webhooks will be refused until you connect it again.`)) return;
    try {
      await api.disconnectProvider(props.domain, p.provider);
    } catch (error) {
      alert(error instanceof Error ? error.message : String(error));
    }
    props.onChange();
  };

  const hook = p.last_webhook;
  return (
    <li class="provider" data-provider={p.provider}>
      <div class="provider-head">
        <strong>{info.label}</strong>
        <span class={`pill ${p.connected ? 'pill-ok' : ''}`}>{p.connected ? 'Connected' : 'Not connected'}</span>
        <span class="grow" />
        <button
          type="button"
          class="btn btn-small"
          onClick={() => setImporting(!importing)}
          aria-expanded={importing}
          data-import-toggle
        >
          Import history
        </button>
        {p.connected ? (
          <>
            <button type="button" class="btn btn-small" onClick={() => setOpen(!open)}>
              Replace secret
            </button>
            <button type="button" class="btn btn-small btn-danger" onClick={() => void disconnect()}>
              Disconnect
            </button>
          </>
        ) : (
          <button type="button" class="btn btn-small btn-primary" onClick={() => setOpen(!open)} aria-expanded={open}>
            Connect
          </button>
        )}
      </div>
      {p.connected ? (
        <p class="muted small" data-last-webhook>
          Connected {formatDateTime(p.connected_at)}.{' '}
          {hook ? (
            <>
              Last webhook {formatAgo(hook.ts)} ({formatDateTime(hook.ts)}):{' '}
              <span class={String(hook.status).startsWith('2') ? 'ok' : 'warn'}>{hook.status}</span> {hook.result}
            </>
          ) : (
            'No webhook received yet.'
          )}
          {p.rejected_webhooks ? (
            <span data-rejected-webhooks>
              {' '}
              <span class="warn">
                {p.rejected_webhooks.count} {p.rejected_webhooks.count === 1 ? 'delivery' : 'deliveries'} refused for a
                bad signature
              </span>
              , the last {formatAgo(p.rejected_webhooks.last_ts)}. If these come from {info.label}, replace the secret.
            </span>
          ) : null}
        </p>
      ) : null}
      {open || p.connected ? (
        <div class="copy-row">
          <span class="muted small">Webhook URL</span>
          <code class="secret" data-webhook-url>
            {p.webhook_url}
          </code>
          <CopyButton text={p.webhook_url} />
        </div>
      ) : null}
      {open ? (
        <form class="stack-form" onSubmit={(e) => void connect(e)} noValidate>
          <ol class="small">
            <li>
              In {info.label}: {info.where}
            </li>
            <li>Paste the webhook URL above as the endpoint.</li>
            <li>
              Send these events: <code>{info.events}</code>.
            </li>
            <li>Paste the signing secret here.</li>
          </ol>
          <Field label="Signing secret" name="webhook_secret" error={form.errors.webhook_secret}>
            <input
              {...inputProps('webhook_secret', form.errors.webhook_secret)}
              type="password"
              autocomplete="off"
              value={secret}
              onInput={(e) => setSecret(e.currentTarget.value)}
              placeholder={info.placeholder}
            />
          </Field>
          {form.errors._form ? (
            <p class="form-error" role="alert">
              {form.errors._form}
            </p>
          ) : null}
          <button class="btn btn-primary" type="submit" disabled={busy}>
            Save and connect
          </button>
        </form>
      ) : null}
      {importing ? <ImportHistory domain={props.domain} provider={p.provider} label={info.label} /> : null}
    </li>
  );
}

/** `/settings/sites/<domain>`: the tracking snippet, whether events arrived, the site's settings and its payment providers. */
/** The danger zone: deletes the site once its domain is typed again (`DELETE /api/app/sites/{domain}`, docs/app.md). */
function DeleteSite(props: { domain: string }): JSX.Element {
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [command, setCommand] = useState<string | null>(null);
  const form = useFormErrors();
  const remove = async (e: Event) => {
    e.preventDefault();
    form.clear();
    setBusy(true);
    try {
      setCommand((await api.deleteSite(props.domain, typed)).command);
    } catch (error) {
      form.fromError(error, ['confirm']);
    }
    setBusy(false);
  };
  if (command)
    return (
      <div data-site-deleted>
        <p class="notice notice-success" role="status">
          {props.domain} is deleted: its reports, keys' access, provider connections and webhooks are gone. Its stored
          data and raw archive are deleted by this command (it resumes if stopped):
        </p>
        <div class="copy-row">
          <code class="secret">{command}</code>
          <CopyButton text={command} />
        </div>
        <p>
          <a href="/settings/sites">Back to sites</a>
        </p>
      </div>
    );
  return (
    <form class="stack-form" onSubmit={(e) => void remove(e)} noValidate>
      <p>
        Deleting <strong>{props.domain}</strong> removes it and all its data for good: visits, reports, payments,
        provider connections and the raw archive. There is no undo.
      </p>
      <ConfirmDomain
        domain={props.domain}
        typed={typed}
        setTyped={setTyped}
        errors={form.errors}
        busy={busy}
        action="Delete this site"
      />
    </form>
  );
}

export function SiteSettings(props: { domain: string }): JSX.Element {
  const { query } = useLocation();
  const sites = useData(() => api.appSites(), `app-sites|${props.domain}`);
  const providers = useData(() => api.providers(props.domain), `providers|${props.domain}`);
  const site = sites.data?.sites.find((s) => s.domain === props.domain);
  const code = snippet(props.domain);
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/settings/sites">Sites</a> › {props.domain}
      </nav>
      {sites.error ? <ErrorBox error={sites.error} retry={sites.reload} /> : null}
      {!sites.data && sites.loading ? <Loading /> : null}
      {sites.data && !site ? (
        <div class="error-box" role="alert">
          <p>This account has no site {props.domain}.</p>
        </div>
      ) : null}
      {site ? (
        <>
          <Card title="Tracking snippet">
            <p>
              Put this in the <code>&lt;head&gt;</code> of every page of <strong>{site.domain}</strong>:
            </p>
            <div class="copy-row">
              <code class="secret" data-snippet>
                {code}
              </code>
              <CopyButton text={code} />
            </div>
            <p data-events-status class={site.last_event_ts ? 'ok' : 'warn'}>
              {site.last_event_ts
                ? `Events are arriving: the last one ${formatAgo(site.last_event_ts)} (${formatDateTime(site.last_event_ts)}).`
                : 'No events yet. Load a page with the snippet, then come back (the tracker is silent on localhost).'}
            </p>
            <p class="muted small">
              Goals: <code>footfall('goal', 'signup')</code> or <code>data-footfall-goal="signup"</code> on a button.
              Pass <code>footfall.visitorId()</code> to your checkout as <code>footfall_visitor_id</code> so payments
              are credited.
            </p>
            <p>
              <a href={`/sites/${encodeURIComponent(site.domain)}`}>Open the dashboard →</a>
            </p>
          </Card>
          <Card title="Reports">
            <SiteForm
              key={`${site.timezone}|${site.attribution}|${site.lookback_days}`}
              site={site}
              onSaved={() => sites.reload()}
            />
          </Card>
          <Card title="Payment providers">
            <p class="muted">
              Payments arrive as webhooks, each checked with the provider's signing secret. Past payments: Import
              history with a read-only key (or <code>footfall import payments</code> from a file).
            </p>
            {providers.error ? <ErrorBox error={providers.error} retry={providers.reload} /> : null}
            {!providers.data && providers.loading ? <Loading /> : null}
            <ul class="providers">
              {providers.data?.providers.map((p) => (
                <ProviderCard key={p.provider} domain={site.domain} provider={p} onChange={providers.reload} />
              ))}
            </ul>
          </Card>
          <ShareLinksCard domain={site.domain} />
          <Card title="Erase a person">
            <ErasePerson domain={site.domain} initial={query.erase_visitor} />
          </Card>
          <Card title="Email reports">
            <EmailReports domain={site.domain} />
          </Card>
          <Card title="Danger zone">
            <DeleteSite domain={site.domain} />
          </Card>
        </>
      ) : null}
    </>
  );
}
