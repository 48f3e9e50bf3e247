import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { formatChange } from '../format.js';
import { tabKeyTarget } from './tab-keys.js';

/** A labelled form field with its error next to it (the backend's `{error, field}`). */
export function Field(props: {
  label: string;
  name: string;
  error?: string | null;
  hint?: ComponentChildren;
  children: ComponentChildren;
}): JSX.Element {
  const id = `f-${props.name}`;
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label for={id}>{props.label}</label>
      {props.children}
      {props.hint && !props.error ? <p class="hint">{props.hint}</p> : null}
      {props.error ? (
        <p class="field-error" id={`${id}-error`} role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** Props for an input inside a `Field`: its id, and its error wired for screen readers. */
export function inputProps(name: string, error?: string | null): Record<string, string | boolean> {
  const props: Record<string, string | boolean> = { id: `f-${name}`, name };
  if (error) {
    props['aria-invalid'] = true;
    props['aria-describedby'] = `f-${name}-error`;
  }
  return props;
}

/**
 * Errors of one form: a message per field from the server's `{error, field}`
 * (or the form's own checks), the rest as a form-level message.
 */
export function useFormErrors() {
  const [errors, setErrors] = useState<Record<string, string>>({});
  return {
    errors,
    clear: () => setErrors({}),
    set: (field: string, message: string) => setErrors({ [field]: message }),
    fromError(error: unknown, fields: readonly string[]) {
      const e = error instanceof ApiError ? error : new ApiError(0, String(error));
      setErrors({ [e.field && fields.includes(e.field) ? e.field : '_form']: e.message });
    },
  };
}

/** A button that copies `text` and says so for two seconds. */
export function CopyButton(props: { text: string; label?: string }): JSX.Element {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
    setTimeout(() => setCopied(null), 2000);
  };
  return (
    <button type="button" class="btn btn-small" onClick={() => void copy()} aria-live="polite">
      {copied === 'yes' ? 'Copied' : copied === 'no' ? 'Select and copy' : (props.label ?? 'Copy')}
    </button>
  );
}

/** A relative change against the previous period (`docs/api.md` "Overview"), coloured by direction. */
export function Change(props: { value: number | null | undefined; lowerIsBetter?: boolean }): JSX.Element | null {
  const text = formatChange(props.value);
  if (text === null)
    return (
      <span class="change change-none" title="No previous value to compare with">
        —
      </span>
    );
  // The colour says good (up) or bad (down); the arrow keeps the direction. A lower bounce rate is good.
  const sign = Math.sign(props.value ?? 0) * (props.lowerIsBetter ? -1 : 1);
  const dir = sign > 0 ? 'up' : sign < 0 ? 'down' : 'flat';
  return (
    <span class={`change change-${dir}`} title="Change against the previous period of equal length">
      {text}
    </span>
  );
}

/** A failed request, with a retry. */
export function ErrorBox(props: { error: ApiError; retry?: () => void }): JSX.Element {
  return (
    <div class="error-box" role="alert">
      <p>{props.error.status === 404 ? 'Not found.' : props.error.message}</p>
      {props.retry && props.error.status !== 404 ? (
        <button type="button" class="btn btn-small" onClick={props.retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** A placeholder while the first answer is on its way. */
export function Loading(props: { label?: string }): JSX.Element {
  return (
    <div class="loading" role="status" aria-live="polite">
      {props.label ?? 'Loading…'}
    </div>
  );
}

/** A titled card. */
export function Card(props: {
  title?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  class?: string;
  id?: string;
}): JSX.Element {
  return (
    <section class={`card${props.class ? ` ${props.class}` : ''}`} id={props.id}>
      {props.title || props.actions ? (
        <header class="card-head">
          {props.title ? <h2>{props.title}</h2> : <span />}
          {props.actions}
        </header>
      ) : null}
      {props.children}
    </section>
  );
}

/**
 * A tab list (WAI-ARIA APG tabs pattern, automatic activation): the selected
 * tab alone is in the tab order, arrow keys, Home and End move and select.
 * Each tab is `#tab-<item>` and controls `panelId` (default
 * `panel-<label lowercased>`); `names` gives the text of each item.
 */
export function Tabs<T extends string>(props: {
  label: string;
  items: readonly T[];
  selected: T;
  onSelect(item: T): void;
  names?: Readonly<Record<T, string>>;
  panelId?: string;
  dataAttr?: string;
}): JSX.Element {
  const panelId = props.panelId ?? `panel-${props.label.toLowerCase()}`;
  const attr = props.dataAttr ?? 'dimension';
  const onKey = (e: KeyboardEvent) => {
    const at = props.items.indexOf((e.currentTarget as HTMLElement).dataset[attr] as T);
    const next = tabKeyTarget(e.key, at, props.items.length);
    if (next === null) return;
    e.preventDefault();
    const item = props.items[next]!;
    props.onSelect(item);
    (e.currentTarget as HTMLElement).parentElement?.querySelector<HTMLElement>(`[data-${attr}="${item}"]`)?.focus();
  };
  return (
    <div class="panel-tabs" role="tablist" aria-label={props.label}>
      {props.items.map((item) => (
        <button
          key={item}
          type="button"
          role="tab"
          id={`tab-${item}`}
          aria-selected={item === props.selected}
          aria-controls={panelId}
          tabIndex={item === props.selected ? 0 : -1}
          {...{ [`data-${attr}`]: item }}
          onClick={() => props.onSelect(item)}
          onKeyDown={onKey}
        >
          {props.names?.[item] ?? item}
        </button>
      ))}
    </div>
  );
}
