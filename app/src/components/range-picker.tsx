import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { RangeQuery } from '../api.js';
import { RANGES, rangeSearch, type SearchValue } from '../range.js';

/**
 * The range picker: named ranges as links (so each is a URL that reproduces
 * the view, and opens in a new tab with a middle click), custom dates as a
 * small form. Keys d/w/t/n/y/a pick a range, as Plausible's do.
 */
export function RangePicker(props: {
  range: RangeQuery;
  /** Parameters every range keeps (the payments' list filter, the dashboard's filters). */
  extra?: Record<string, SearchValue>;
}): JSX.Element {
  const { path, route } = useLocation();
  const custom = 'from' in props.range;
  const [open, setOpen] = useState(custom);
  const [from, setFrom] = useState(custom ? (props.range as { from: string }).from : '');
  const [to, setTo] = useState(custom ? (props.range as { to: string }).to : '');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (e.ctrlKey || e.metaKey || e.altKey || (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName))) return;
      const hit = RANGES.find((r) => r.key === e.key);
      if (hit) route(`${path}${rangeSearch({ range: hit.value }, props.extra)}`);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [path, route, props.extra]);

  const apply = (e: Event) => {
    e.preventDefault();
    if (!from || !to) return setError('Choose both dates.');
    if (from > to) return setError('The first day must come before the last.');
    setError(null);
    route(`${path}${rangeSearch({ from, to }, props.extra)}`);
  };

  return (
    <div class="range-picker">
      <nav class="segmented" aria-label="Date range">
        {RANGES.map((r) => {
          const active = !custom && (props.range as { range: string }).range === r.value;
          return (
            <a
              key={r.value}
              href={`${path}${rangeSearch({ range: r.value }, props.extra)}`}
              class={active ? 'active' : ''}
              aria-current={active ? 'page' : undefined}
              title={`${r.label} (key ${r.key})`}
              data-range={r.value}
            >
              {r.value === 'today' ? 'Today' : r.value === 'all' ? 'All' : r.value}
            </a>
          );
        })}
        <button type="button" class={custom ? 'active' : ''} aria-expanded={open} onClick={() => setOpen(!open)}>
          Custom
        </button>
      </nav>
      {open ? (
        <form class="custom-range" onSubmit={apply}>
          <label>
            From <input type="date" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} required />
          </label>
          <label>
            To <input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
          </label>
          <button class="btn btn-small" type="submit">
            Apply
          </button>
          {error ? (
            <p class="field-error" role="alert">
              {error}
            </p>
          ) : null}
        </form>
      ) : null}
    </div>
  );
}
