import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { ApiError, post } from '../api.js';

/**
 * `/unsubscribe/<token>`: the link at the foot of every email report (no sign-in). A button, not
 * the page load, unsubscribes, so that a mail scanner opening the link changes nothing; mail
 * providers' own unsubscribe button POSTs the token directly (RFC 8058, `docs/app.md`).
 */
export function Unsubscribe(): JSX.Element {
  const token = useRoute().params.token ?? '';
  const [state, setState] = useState<{ site: string } | ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const go = async () => {
    setBusy(true);
    try {
      setState(await post<{ site: string }>(`/api/app/unsubscribe/${encodeURIComponent(token)}`));
    } catch (error) {
      setState(error instanceof ApiError ? error : new ApiError(0, String(error)));
    }
    setBusy(false);
  };
  return (
    <div class="page narrow">
      <h1>Email reports</h1>
      {state === null ? (
        <>
          <p>Stop receiving the email reports this link came with?</p>
          <button class="btn btn-primary" type="button" disabled={busy} onClick={() => void go()}>
            Unsubscribe
          </button>
        </>
      ) : state instanceof ApiError ? (
        <p class="form-error" role="alert">
          {state.message}
        </p>
      ) : (
        <p class="notice notice-success" role="status">
          Done: this address no longer receives the reports of {state.site}.
        </p>
      )}
    </div>
  );
}
