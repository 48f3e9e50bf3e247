import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { FilterDimension } from '../../../lambdas/domain/reports/filter-dimensions.js';
import { api, type RangeQuery, type ReportScope } from '../api.js';
import {
  CHIP_OPERATORS,
  MAX_VALUES,
  OPERATOR_TEXT,
  apiFilters,
  propDimension,
  propKey,
  replacedAt,
  withoutAt,
  type ChipDimension,
  type ChipOperator,
} from '../filters.js';
import { useData } from '../use-data.js';
import { formatCount } from '../format.js';
import type { PageFilters } from '../use-filters.js';
import { FILTER_GROUPS, breakdownOf, dimensionName, valueName } from './filter-names.js';

/** The dimension menu's choice for a custom property (its key is typed beside it). */
const PROPERTY = 'props';
type Choice = FilterDimension | typeof PROPERTY;

/** Values the dialog suggests at most: the breakdown's first rows (most revenue, then visitors). */
export const SUGGESTIONS = 100;

/** A suggested value and how the panels name it. */
interface Suggestion {
  value: string;
  label: string;
}

/**
 * The values of `dimension` in the range under `scope`'s filters, most revenue and visitors first, from the
 * report a panel shows them in (`breakdown/<dimension>`, `breakdown/prop:<key>`, the goals report); none for a
 * dimension no report lists (a source). The rows that are no value are left out: a row click filters by them.
 */
async function suggestionsFor(domain: string, dimension: ChipDimension, scope: ReportScope): Promise<Suggestion[]> {
  if (dimension === 'event:goal') {
    const goals = await api.goals(domain, scope, null, SUGGESTIONS);
    return goals.rows.filter((r) => !r.other).map((r) => ({ value: r.goal, label: r.goal }));
  }
  const key = propKey(dimension);
  const breakdown = key === null ? breakdownOf(dimension) : `prop:${key}`;
  if (breakdown === null) return [];
  const rows = (await api.breakdown(domain, breakdown, scope, SUGGESTIONS)).rows;
  return rows.flatMap((r) =>
    r.key === null || r.key === '' || r.unattributed ? [] : [{ value: r.key, label: valueName(dimension, r.key) }],
  );
}

/** The elements Tab stops at inside `root`, in order. */
const tabStops = (root: HTMLElement): HTMLElement[] =>
  [...root.querySelectorAll<HTMLElement>('button, input, select, a[href]')].filter(
    (e) => !(e as HTMLButtonElement).disabled && e.offsetParent !== null,
  );

/**
 * The filter dialog (`docs/app.md` "Filters"), Plausible's "Filter by…":
 * a modal `<dialog>` (the page behind is inert, Escape closes it, Tab and
 * Shift+Tab cycle inside it, focus returns to what opened it) to choose a
 * dimension in its group or a custom property by key, an operator, and one or
 * more values (a visit matches any), with the dimension's values in the range
 * under the other filters suggested as you type. Applying replaces the chip
 * at `index` (or adds one when `index` is past the chips) and navigates to
 * the address with the new filters.
 */
export function FilterDialog(props: {
  filters: PageFilters;
  /** The chip edited, or `filters.chips.length` for a new one. */
  index: number;
  domain: string;
  range: RangeQuery;
  close(): void;
}): JSX.Element {
  const { route } = useLocation();
  const { chips } = props.filters;
  const editing = chips[props.index];
  const ref = useRef<HTMLDialogElement>(null);
  const valueInput = useRef<HTMLInputElement>(null);
  const editedKey = editing ? propKey(editing.dimension) : null;
  const [choice, setChoice] = useState<Choice>(
    editing ? (editedKey === null ? (editing.dimension as FilterDimension) : PROPERTY) : 'event:page',
  );
  const [keyText, setKeyText] = useState(editedKey ?? '');
  // The key suggestions are asked for: the typed key once it is committed (change, Enter), not every keystroke.
  const [askedKey, setAskedKey] = useState(editedKey ?? '');
  const [op, setOp] = useState<ChipOperator>(editing?.op ?? 'is');
  const [values, setValues] = useState<string[]>(editing?.values ?? []);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    return () => dialog.open && dialog.close();
  }, []);

  const dimension: ChipDimension | null =
    choice === PROPERTY ? (askedKey.trim() ? propDimension(askedKey.trim()) : null) : choice;
  // Suggestions under the other filters, as Plausible's: what adding this one to them would narrow.
  const others = apiFilters(withoutAt(chips, props.index));
  const suggestions = useData(
    () =>
      dimension ? suggestionsFor(props.domain, dimension, { ...props.range, filters: others }) : Promise.resolve([]),
    `${dimension ?? ''}|${JSON.stringify(props.range)}|${others ?? ''}`,
  );
  const offered = (suggestions.data ?? []).filter((s) => !values.includes(s.value));
  // The keys the range's visits had, under the other filters (`properties`): what the key field suggests.
  const keys = useData(
    () =>
      choice === PROPERTY
        ? api.properties(props.domain, { ...props.range, filters: others }, SUGGESTIONS).then((p) => p.rows)
        : Promise.resolve([]),
    `${choice === PROPERTY}|${JSON.stringify(props.range)}|${others ?? ''}`,
  );
  const setKey = (value: string, committed: boolean) => {
    setKeyText(value);
    // A key picked from the suggestions is committed at once: its values are asked for without waiting for a change.
    if (committed || (keys.data ?? []).some((k) => k.key === value)) setAskedKey(value);
  };

  const addValue = (value: string): boolean => {
    if (value === '' || values.includes(value)) return false;
    if (values.length >= MAX_VALUES) {
      setError(`At most ${MAX_VALUES} values a filter.`);
      return false;
    }
    setValues([...values, value]);
    setText('');
    setError(null);
    return true;
  };

  const apply = (e: Event) => {
    e.preventDefault();
    const key = keyText.trim();
    const all = text.trim() && !values.includes(text.trim()) ? [...values, text.trim()] : values;
    if (choice === PROPERTY && !key) return setError('Type the property key to filter by.');
    if (all.length === 0) {
      setError('Add at least one value.');
      valueInput.current?.focus();
      return;
    }
    if (all.length > MAX_VALUES) return setError(`At most ${MAX_VALUES} values a filter.`);
    const chip = { op, dimension: choice === PROPERTY ? propDimension(key) : choice, values: all };
    props.close();
    route(props.filters.href(replacedAt(chips, props.index, chip)));
  };

  /** Tab and Shift+Tab wrap around inside the dialog, so focus never leaves it for the page behind. */
  const trapTab = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return;
    const stops = tabStops(ref.current!);
    const first = stops[0];
    const last = stops[stops.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last?.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first?.focus();
    }
  };

  const title = editing ? 'Edit filter' : 'Filter by';
  const valueLabel = values.length ? 'Another value' : 'Value';
  return (
    <dialog
      ref={ref}
      class="filter-dialog"
      aria-labelledby="filter-dialog-title"
      onClose={props.close}
      onKeyDown={trapTab}
      data-filter-dialog
    >
      <form onSubmit={apply} noValidate>
        <h2 id="filter-dialog-title">{title}</h2>
        <div class="filter-dialog-row">
          <SelectField
            id="filter-dimension"
            label="Dimension"
            value={choice}
            choose={(value) => {
              setChoice(value as Choice);
              setValues([]);
              setError(null);
            }}
          >
            {FILTER_GROUPS.map((g) => (
              <optgroup key={g.name} label={g.name}>
                {g.dimensions.map((d) => (
                  <option key={d} value={d}>
                    {dimensionName(d)}
                  </option>
                ))}
              </optgroup>
            ))}
            <optgroup label="Properties">
              <option value={PROPERTY}>Custom property…</option>
            </optgroup>
          </SelectField>
          {choice === PROPERTY ? (
            <div class="field">
              <label for="filter-prop-key">Property key</label>
              <input
                id="filter-prop-key"
                name="prop_key"
                list="filter-prop-keys"
                value={keyText}
                maxLength={300}
                autoComplete="off"
                spellcheck={false}
                onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value, false)}
                onChange={(e) => setKey((e.currentTarget as HTMLInputElement).value, true)}
              />
              <datalist id="filter-prop-keys" data-prop-keys>
                {(keys.data ?? []).map((k) => (
                  <option key={k.key} value={k.key}>
                    {`${formatCount(k.visitors)} ${k.visitors === 1 ? 'visitor' : 'visitors'}`}
                  </option>
                ))}
              </datalist>
            </div>
          ) : null}
          <SelectField id="filter-op" label="Operator" value={op} choose={(value) => setOp(value as ChipOperator)}>
            {CHIP_OPERATORS.map((o) => (
              <option key={o} value={o}>
                {OPERATOR_TEXT[o].words}
              </option>
            ))}
          </SelectField>
        </div>
        {values.length ? (
          <ul class="filter-values" aria-label="Values (a visit matches any)">
            {values.map((v) => (
              <li key={v} class="chip" data-value={v}>
                <span class="chip-value">{dimension ? valueName(dimension, v) : v}</span>
                <button
                  type="button"
                  class="chip-remove"
                  aria-label={`Remove the value ${dimension ? valueName(dimension, v) : v}`}
                  onClick={() => setValues(values.filter((x) => x !== v))}
                >
                  <span aria-hidden="true">×</span>
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        <div class="field">
          <label for="filter-value">{valueLabel}</label>
          <div class="filter-value-row">
            <input
              id="filter-value"
              ref={valueInput}
              name="value"
              list="filter-suggestions"
              value={text}
              autoComplete="off"
              spellcheck={false}
              aria-describedby="filter-value-hint"
              aria-invalid={error ? true : undefined}
              onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
              onKeyDown={(e) => {
                // Enter adds the typed value (another can follow); with nothing typed it applies the filter.
                if (e.key === 'Enter' && text.trim()) {
                  e.preventDefault();
                  addValue(text.trim());
                }
              }}
            />
            <button type="button" class="btn" onClick={() => addValue(text.trim())} disabled={!text.trim()}>
              Add
            </button>
          </div>
          <datalist id="filter-suggestions" data-suggestions={suggestions.loading ? 'loading' : offered.length}>
            {offered.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label === s.value ? null : s.label}
              </option>
            ))}
          </datalist>
          <p id="filter-value-hint" class="hint">
            {hint(
              op,
              dimension === null
                ? 'key'
                : suggestions.loading
                  ? 'loading'
                  : suggestions.error || !suggestions.data?.length
                    ? 'none'
                    : suggestions.data.length,
            )}
          </p>
          {error ? (
            <p class="field-error" role="alert" data-filter-error>
              {error}
            </p>
          ) : null}
        </div>
        <div class="filter-dialog-actions">
          <button type="button" class="btn" onClick={() => ref.current!.close()}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" data-apply-filter>
            {editing ? 'Update filter' : 'Apply filter'}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** A labelled menu of the dialog: `id` names it, `choose` gets the value of the option chosen. */
function SelectField(props: {
  id: string;
  label: string;
  value: string;
  choose(value: string): void;
  children: ComponentChildren;
}): JSX.Element {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        value={props.value}
        onChange={(e) => props.choose((e.currentTarget as HTMLSelectElement).value)}
      >
        {props.children}
      </select>
    </div>
  );
}

/** How a filter's values combine, by operator (`docs/api.md` "Filters"). */
const COMBINE: Readonly<Record<ChipOperator, string>> = {
  is: 'A visit matches when its value is one of these.',
  is_not: 'A visit matches when its value is none of these.',
  contains: 'A visit matches when its value contains one of these, ignoring case.',
  contains_not: 'A visit matches when its value contains none of these, ignoring case.',
};

/** The line under the value: where suggestions come from, or why there are none, and how values combine. */
function hint(op: ChipOperator, state: 'key' | 'loading' | 'none' | number): string {
  const lead =
    state === 'key'
      ? 'Type the property key, then a value.'
      : state === 'loading'
        ? 'Loading suggestions…'
        : state === 'none'
          ? 'No suggestions in this range: type a value.'
          : `Suggested as you type: the ${state} leading values of this range.`;
  return `${lead} ${COMBINE[op]}`;
}
