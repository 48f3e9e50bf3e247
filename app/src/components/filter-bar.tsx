import type { ComponentChildren, JSX } from 'preact';
import { FILTER_DIMENSIONS, type FilterDimension } from '../../../lambdas/domain/reports/filter-dimensions.js';
import type { Overview } from '../api.js';
import { negatedAt, withoutAt, type FilterChip } from '../filters.js';
import { formatDay } from '../range.js';
import type { PageFilters } from '../use-filters.js';
import { KEY_HEADING, NONE_LABEL, keyName, type Dimension } from './breakdown-panel.js';

/** Names of the filter dimensions no breakdown panel shows (the others take their panel's column heading). */
const OTHER_NAMES: Partial<Record<FilterDimension, string>> = { 'visit:source': 'Source', 'event:goal': 'Goal' };

/** A filter dimension's name on a chip: "Channel", "Page", "Goal". */
export function dimensionName(dimension: FilterDimension): string {
  const breakdown = FILTER_DIMENSIONS[dimension].breakdown as Dimension | null;
  return breakdown ? KEY_HEADING[breakdown] : (OTHER_NAMES[dimension] ?? dimension);
}

/** A chip's value as the panels show it: a country or language by name, "Direct / none" for no referrer. */
export function valueName(chip: FilterChip): string {
  const breakdown = FILTER_DIMENSIONS[chip.dimension].breakdown as Dimension | null;
  if (chip.value === '') return (breakdown && NONE_LABEL[breakdown]) ?? '(none)';
  const named = breakdown ? keyName(breakdown, chip.value) : null;
  return named !== null && named !== chip.value ? `${named} (${chip.value})` : chip.value;
}

const OP_TEXT = { is: 'is', is_not: 'is not' } as const;

/**
 * The filters above the top stats (`docs/app.md` "Filters"): one chip per
 * condition, all of which a visit must match, each with its operator as a
 * link that negates it (is ↔ is not) and × that removes it, "Clear all", and
 * what the filters change: every figure counts the matching visits only (the
 * previous period too), revenue is the revenue credited to them (payments
 * credited to no visit are left out), the panels list only their values, and
 * the range's imported days are left out (`filtered.imported_excluded`).
 * Every change is a link: the address holds the filters, so back and
 * forward step through them. The payments and retention pages say their own
 * sentence (`children`).
 */
export function FilterBar(props: {
  filters: PageFilters;
  overview?: Overview | undefined;
  /** What the filters change on this page, in place of the dashboard's sentence. */
  children?: ComponentChildren;
}): JSX.Element | null {
  const { chips, ignored, href } = props.filters;
  if (chips.length === 0 && ignored === 0) return null;
  const excluded = props.overview?.filtered?.imported_excluded ?? null;
  return (
    <section class="filter-bar" aria-label="Filters" data-filters={chips.length}>
      {chips.length ? (
        <ul class="chips">
          {chips.map((c, i) => {
            const name = dimensionName(c.dimension);
            const value = valueName(c);
            const other = c.op === 'is' ? 'is_not' : 'is';
            return (
              <li key={c.dimension} class={`chip chip-${c.op}`} data-chip={c.dimension} data-op={c.op}>
                <span class="chip-name">{name}</span>{' '}
                <a
                  class="chip-op"
                  href={href(negatedAt(chips, i))}
                  aria-label={`${name} ${OP_TEXT[c.op]} ${value}: change to ${OP_TEXT[other]}`}
                  title={`Change to ${OP_TEXT[other]}`}
                  data-negate
                >
                  {OP_TEXT[c.op]}
                </a>{' '}
                <span class="chip-value" title={value}>
                  {value}
                </span>
                <a
                  class="chip-remove"
                  href={href(withoutAt(chips, i))}
                  aria-label={`Remove the filter ${name} ${OP_TEXT[c.op]} ${value}`}
                  title="Remove this filter"
                  data-remove
                >
                  <span aria-hidden="true">×</span>
                </a>
              </li>
            );
          })}
          <li>
            <a class="btn btn-small btn-ghost" href={href([])} data-clear-filters>
              Clear all
            </a>
          </li>
        </ul>
      ) : null}
      <div class="filter-notes muted small" role="note">
        {chips.length && props.children ? props.children : null}
        {chips.length && !props.children ? (
          <p>
            Every figure counts only the visits that match {chips.length === 1 ? 'this filter' : 'all these filters'},
            the previous period&apos;s too; the panels list their values only. Revenue is the revenue credited to those
            visits: payments credited to no visit (Unattributed) are left out.
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
    </section>
  );
}
