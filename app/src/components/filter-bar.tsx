import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Overview, RangeQuery } from '../api.js';
import { OPERATOR_TEXT, negatedAt, withoutAt } from '../filters.js';
import { formatDay } from '../range.js';
import type { PageFilters } from '../use-filters.js';
import { FilterDialog } from './filter-dialog.js';
import { chipSentence, dimensionName, valuesName } from './filter-names.js';
import { useShared } from '../shared.js';

/** How filtered reports were turned off, for the deployment's owner (`docs/deploy.md`); a shared view's reader is not told. */
export function FilteredReportsHint(): JSX.Element | null {
  if (useShared()) return null;
  return (
    <>
      {' '}
      An AWS stack answers them unless deployed with <code>-c filteredReports=false</code> (docs/deploy.md).
    </>
  );
}

/**
 * Where the deployment does not answer filtered reports (`capabilities.ts`): nothing, or, when the address
 * carries filters (a shared link, a bookmark), one note that says they are left out, with the address without them.
 */
function UnansweredFilters(props: { filters: PageFilters }): JSX.Element | null {
  const { unanswered, href } = props.filters;
  if (!unanswered.length) return null;
  return (
    <section class="notice filter-bar" aria-label="Filters" role="note" data-filters-unanswered={unanswered.length}>
      <p>
        This address filters by {unanswered.map(chipSentence).join(' and ')}, but this deployment does not answer
        filtered reports: every figure below is the whole site&apos;s, unfiltered.
        <FilteredReportsHint />
      </p>
      <p>
        <a href={href([])} data-clear-filters>
          Open the address without filters
        </a>
      </p>
    </section>
  );
}

/**
 * The filters above the top stats (`docs/app.md` "Filters"): the "Filter"
 * button that opens the filter dialog, one chip per condition, all of which
 * a visit must match, each with its operator as a link that negates it
 * (is ↔ is not, contains ↔ does not contain), its values as a button that
 * opens the dialog on it, and × that removes it, "Clear all", and what the
 * filters change: every figure counts the matching visits only (the
 * previous period too), revenue is the revenue credited to them (payments
 * credited to no visit are left out), the panels list only their values, and
 * the range's imported days are left out (`filtered.imported_excluded`).
 * Every change is a link: the address holds the filters, so back and
 * forward step through them. The payments and retention pages say their own
 * sentence (`children`). Where the deployment does not answer filters, no button and no chip: at most a note that
 * the address's filters are left out.
 */
export function FilterBar(props: {
  filters: PageFilters;
  /** The site and range the dialog suggests values from. */
  domain: string;
  range: RangeQuery;
  overview?: Overview | undefined;
  /** What the filters change on this page, in place of the dashboard's sentence. */
  children?: ComponentChildren;
}): JSX.Element | null {
  const { chips, ignored, href } = props.filters;
  // The chip the dialog edits: its index, `chips.length` for a new filter, null when the dialog is closed.
  const [editing, setEditing] = useState<number | null>(null);
  if (!props.filters.enabled) return <UnansweredFilters filters={props.filters} />;
  const excluded = props.overview?.filtered?.imported_excluded ?? null;
  // Today's unfiltered figures are live; filtered ones follow the visit table (`docs/api.md` "Filters").
  const live = 'range' in props.range && props.range.range === 'today';
  return (
    <section class="filter-bar" aria-label="Filters" data-filters={chips.length}>
      <ul class="chips">
        {chips.map((c, i) => {
          const name = dimensionName(c.dimension);
          const value = valuesName(c);
          const words = OPERATOR_TEXT[c.op].words;
          const other = OPERATOR_TEXT[OPERATOR_TEXT[c.op].negated].words;
          return (
            <li key={c.dimension} class={`chip chip-${c.op}`} data-chip={c.dimension} data-op={c.op}>
              <span class="chip-name">{name}</span>{' '}
              <a
                class="chip-op"
                href={href(negatedAt(chips, i))}
                aria-label={`${chipSentence(c)}: change to ${other}`}
                title={`Change to ${other}`}
                data-negate
              >
                {words}
              </a>{' '}
              <button
                type="button"
                class="chip-value"
                title={`Edit: ${value}`}
                aria-label={`Edit the filter ${chipSentence(c)}`}
                aria-haspopup="dialog"
                onClick={() => setEditing(i)}
                data-edit
              >
                {value}
              </button>
              <a
                class="chip-remove"
                href={href(withoutAt(chips, i))}
                aria-label={`Remove the filter ${chipSentence(c)}`}
                title="Remove this filter"
                data-remove
              >
                <span aria-hidden="true">×</span>
              </a>
            </li>
          );
        })}
        <li>
          <button
            type="button"
            class="btn btn-small"
            aria-haspopup="dialog"
            onClick={() => setEditing(chips.length)}
            data-add-filter
          >
            <span aria-hidden="true">+</span> Filter
          </button>
        </li>
        {chips.length ? (
          <li>
            <a class="btn btn-small btn-ghost" href={href([])} data-clear-filters>
              Clear all
            </a>
          </li>
        ) : null}
      </ul>
      {editing !== null ? (
        <FilterDialog
          filters={props.filters}
          index={editing}
          domain={props.domain}
          range={props.range}
          close={() => setEditing(null)}
        />
      ) : null}
      {chips.length || excluded || ignored ? (
        <div class="filter-notes muted small" role="note">
          {chips.length && props.children ? props.children : null}
          {chips.length && !props.children ? (
            <p>
              Every figure counts only the visits that match {chips.length === 1 ? 'this filter' : 'all these filters'},
              the previous period&apos;s too; the panels list their values only. Revenue is the revenue credited to
              those visits: payments credited to no visit (Unattributed) are left out.{' '}
              <span data-realtime-unfiltered>
                Current visitors are not filtered
                {live
                  ? ", and today's filtered figures lag the live ones by up to the archive's delivery and an operations run (15 minutes in AWS)"
                  : ''}
                .
              </span>
            </p>
          ) : null}
          {excluded ? (
            <p data-imported-excluded>
              {formatDay(excluded.from)} – {formatDay(excluded.to)} are left out: they were imported from Plausible as
              daily totals, with no visits to filter.
            </p>
          ) : null}
          {ignored ? (
            <p data-filters-ignored>
              {ignored === 1 ? 'One filter' : `${ignored} filters`} in this address could not be read and{' '}
              {ignored === 1 ? 'is' : 'are'} left out.
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
