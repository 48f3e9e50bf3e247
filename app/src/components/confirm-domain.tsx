import type { JSX } from 'preact';
import { Field, inputProps } from './ui.js';

/**
 * The end of a destructive form (deleting a site, erasing a person): the site's domain typed to confirm,
 * the form's error, and the danger button, enabled only once the typed domain matches (case and spaces aside).
 */
export function ConfirmDomain(props: {
  domain: string;
  typed: string;
  setTyped: (value: string) => void;
  errors: Readonly<Record<string, string>>;
  busy: boolean;
  action: string;
}): JSX.Element {
  return (
    <>
      <Field label={`Type ${props.domain} to confirm`} name="confirm" error={props.errors.confirm}>
        <input
          {...inputProps('confirm', props.errors.confirm)}
          autocomplete="off"
          value={props.typed}
          onInput={(e) => props.setTyped(e.currentTarget.value)}
        />
      </Field>
      {props.errors._form ? (
        <p class="form-error" role="alert">
          {props.errors._form}
        </p>
      ) : null}
      <button
        class="btn btn-danger"
        type="submit"
        disabled={props.busy || props.typed.trim().toLowerCase() !== props.domain}
      >
        {props.action}
      </button>
    </>
  );
}
