import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** What a page knows about one request: the last answer, the error, whether one is in flight. */
export interface Data<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `key` changes and keeps the previous answer on screen
 * while the next one is in flight (no flash of empty panels on a range
 * switch); an answer that arrives after a newer request started is dropped.
 * While `ready` is false nothing is asked (and `loading` stays true): a
 * request that must not compete with the page's first ones waits for them.
 */
export function useData<T>(load: () => Promise<T>, key: string, ready = true): Data<T> {
  const [state, setState] = useState<{ data: T | undefined; error: ApiError | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [nonce, setNonce] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    if (!ready) return;
    const id = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (id === latest.current) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (id === latest.current)
          setState((s) => ({
            data: s.data,
            error: error instanceof ApiError ? error : new ApiError(0, String(error)),
            loading: false,
          }));
      },
    );
    // `load` closes over what `key` names, so `key` alone decides when to run it again.
  }, [key, nonce, ready]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { ...state, reload };
}
