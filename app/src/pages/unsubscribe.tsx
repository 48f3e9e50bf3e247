import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { ApiError, post } from '../api.js';

/**
 * The site a token names in the clear (its first part, base64url: `docs/app.md` "Email reports"),
 * only to say on the page what the button stops; the server checks the whole token. `null` when
 * the part does not decode.
 */
function siteOf(token: string): string | null {
  try {
    const part = (token.split('.')[0] ?? '').replace(/-/g, '+').replace(/_/g, '/');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0)));
    return /^[a-z0-9.-]+$/i.test(text) ? text : null;
  } catch {
    return null;
  }
}

/**
 * `/unsubscribe/<token>`: the link at the foot of every email report (no sign-in). A button, not
 * the page load, unsubscribes, so that a mail scanner opening the link changes nothing; mail
 * providers' own unsubscribe button POSTs the token directly (RFC 8058, `docs/app.md`).
 */
export function Unsubscribe(): JSX.Element {
  const token = useRoute().params.token ?? '';
  const site = siteOf(token);
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
          <p>
            Stop receiving the email reports {site ? <strong>of {site}</strong> : null} at the address this link was
            sent to?
          </p>
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
