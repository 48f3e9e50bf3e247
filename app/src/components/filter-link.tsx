import type { ComponentChildren, JSX } from 'preact';
import { withChip, type FilterChip } from '../filters.js';
import type { PageFilters } from '../use-filters.js';

/**
 * A row's label that filters the dashboard by `chip` (`docs/app.md` "Filters"): a link adding it to the page's
 * filters, titled `title`; where the deployment does not answer filters (`filters.enabled` false, `docs/app.md`
 * "What the deployment answers"), the same text unlinked, titled `plainTitle`, so no click can only fail.
 * `none` marks the row that is no value of its dimension.
 */
export function FilterLink(props: {
  filters: PageFilters;
  chip: FilterChip;
  title: string;
  plainTitle?: string | undefined;
  none?: boolean;
  children: ComponentChildren;
}): JSX.Element {
  if (!props.filters.enabled)
    return (
      <span class={props.none ? 'label none' : 'label'} title={props.plainTitle}>
        {props.children}
      </span>
    );
  return (
    <a
      class={props.none ? 'label filter-link none' : 'label filter-link'}
      href={props.filters.href(withChip(props.filters.chips, props.chip))}
      title={props.title}
      data-filter-by={props.chip.dimension}
    >
      {props.children}
    </a>
  );
}
