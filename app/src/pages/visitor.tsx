import type { JSX } from 'preact';
import { useLocation, useRoute } from 'preact-iso';
import { api, type PaymentRow, type Step, type VisitEntry } from '../api.js';
import { SiteHeader } from '../components/layout.js';
import { ErrorBox, Loading } from '../components/ui.js';
import { countryName, formatDateTime, formatDuration, formatMinor, formatTime, formatUsd, plural } from '../format.js';
import { PaymentRowView, PaymentsHead, touchSummary } from './payments.js';
import { useData } from '../use-data.js';
import { useAuth } from '../auth.js';
import { filterParams } from '../filters.js';
import { useFilteredReports } from '../capabilities.js';
import { rangeFromQuery, rangeSearch } from '../range.js';

function PaymentLine(props: { p: PaymentRow }): JSX.Element {
  const p = props.p;
  return (
    <span>
      <strong>{formatMinor(p.amount, p.currency)}</strong> payment ({formatUsd(p.net_usd)} net)
      {p.is_renewal ? ', renewal' : ''}
      {p.status !== 'paid' ? `, ${p.status}` : ''}
      {p.refunded > 0 ? `, ${formatMinor(p.refunded, p.currency)} refunded` : ''}{' '}
      <span class="muted">via {p.provider}</span>
    </span>
  );
}

/**
 * The dashboard of the site filtered by a page (`is event:page <path>`), over the range this page was opened with
 * (30 days by default); null where the deployment does not filter (the page is then plain text).
 */
type PageHref = ((path: string) => string) | null;

function StepView(props: { step: Step; pageHref: PageHref }): JSX.Element {
  const s = props.step;
  switch (s.type) {
    case 'page':
      return (
        <li class="step step-page" data-step="page">
          <time>{formatTime(s.ts)}</time>
          <span class="step-icon" aria-hidden="true">
            ▸
          </span>
          <span>
            Viewed{' '}
            {props.pageHref ? (
              <a
                href={props.pageHref(s.path)}
                title={`Filter the dashboard: Page is ${s.path}`}
                data-filter-by="event:page"
              >
                <code>{s.path}</code>
              </a>
            ) : (
              <code>{s.path}</code>
            )}
          </span>
          <span class="muted">{s.secs === null ? '' : formatDuration(s.secs)}</span>
        </li>
      );
    case 'goal':
      return (
        <li class="step step-goal" data-step="goal">
          <time>{formatTime(s.ts)}</time>
          <span class="step-icon" aria-hidden="true">
            ★
          </span>
          <span>
            Goal <strong>{s.name}</strong>
          </span>
          <span />
        </li>
      );
    case 'exit':
      return (
        <li class="step step-exit" data-step="exit">
          <time>{formatTime(s.ts)}</time>
          <span class="step-icon" aria-hidden="true">
            ⏏
          </span>
          <span>
            Left from <code>{s.page}</code>
            {s.link ? (
              <>
                {' '}
                by a link to{' '}
                <a href={s.link} rel="noopener noreferrer nofollow" target="_blank">
                  {s.link}
                </a>
              </>
            ) : null}
          </span>
          <span />
        </li>
      );
    case 'payment':
      return (
        <li class="step step-payment" data-step="payment">
          <time>{formatTime(s.ts)}</time>
          <span class="step-icon" aria-hidden="true">
            $
          </span>
          <PaymentLine p={s} />
          <span />
        </li>
      );
  }
}

function VisitView(props: { visit: VisitEntry; pageHref: PageHref }): JSX.Element {
  const v = props.visit;
  return (
    <li class="entry entry-visit" data-entry="visit">
      <div class="entry-head">
        <strong>{formatDateTime(v.start)}</strong>
        <span class="muted">
          {touchSummary({ ...v, ts: v.start })} · {v.pageviews} page{v.pageviews === 1 ? '' : 's'} ·{' '}
          {formatDuration(Math.round((Date.parse(v.end) - Date.parse(v.start)) / 1000))}
        </span>
      </div>
      <ol class="steps">
        {v.steps.map((s, i) => (
          <StepView key={i} step={s} pageHref={props.pageHref} />
        ))}
      </ol>
    </li>
  );
}

/**
 * `/sites/<domain>/visitors/<id>`: every visit with its steps, and payments inside and outside visits
 * (`docs/api.md` "Visitor timeline"); a viewed page links to the dashboard filtered by it.
 */
export function VisitorPage(): JSX.Element {
  const { params } = useRoute();
  const domain = params.domain ?? '';
  const { me } = useAuth();
  const isOwner = (me?.user.role ?? 'owner') === 'owner';
  const id = params.visitor ?? '';
  const data = useData(() => api.visitor(domain, id), `${domain}|${id}`);
  const t = data.data;
  const { query } = useLocation();
  const range = rangeFromQuery(query);
  const pageHref: PageHref = useFilteredReports()
    ? (path) =>
        `/sites/${encodeURIComponent(domain)}${rangeSearch(range, { f: filterParams([{ op: 'is', dimension: 'event:page', values: [path] }]) })}`
    : null;
  return (
    <div class="page">
      <SiteHeader domain={domain} search="" current="visitor" />
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={`/sites/${encodeURIComponent(domain)}/payments`}>Payments</a> › Visitor
      </nav>
      {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
      {!t && data.loading ? <Loading /> : null}
      {t ? (
        <>
          <div class="visitor-head card">
            <h2 class="mono">{t.visitor_id}</h2>
            <p>
              {t.country ? countryName(t.country) : 'Unknown country'} · {t.browser ?? 'unknown browser'} ·{' '}
              {t.device ?? 'unknown device'} · {plural(t.entries.filter((e) => e.type === 'visit').length, 'visit')} ·{' '}
              {plural(t.payments.length, 'payment')} ({formatUsd(t.payments.reduce((sum, p) => sum + p.net_usd, 0))}{' '}
              net)
            </p>
            {isOwner ? (
              <p>
                <a
                  class="btn btn-small btn-danger"
                  data-erase-visitor
                  href={`/settings/sites/${encodeURIComponent(domain)}?erase_visitor=${encodeURIComponent(t.visitor_id)}#erase`}
                >
                  Erase this person…
                </a>
              </p>
            ) : null}
          </div>
          <ol class="timeline">
            {t.entries.map((e, i) =>
              e.type === 'visit' ? (
                <VisitView key={i} visit={e} pageHref={pageHref} />
              ) : (
                <li key={i} class="entry entry-payment" data-entry="payment">
                  <div class="entry-head">
                    <strong>{formatDateTime(e.ts)}</strong>
                    <span class="muted">outside a visit</span>
                  </div>
                  <p>
                    <PaymentLine p={e} />
                  </p>
                </li>
              ),
            )}
          </ol>
          {t.payments.length > 0 ? (
            <section class="card table-card">
              <header class="card-head">
                <h2>Payments</h2>
              </header>
              <table class="payments stack-table">
                <PaymentsHead showVisitor={false} />
                <tbody>
                  {t.payments.map((p) => (
                    <PaymentRowView
                      key={`${p.provider}|${p.provider_payment_id}`}
                      row={p}
                      domain={domain}
                      showVisitor={false}
                    />
                  ))}
                </tbody>
              </table>
            </section>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
