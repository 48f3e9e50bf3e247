import { useEffect } from 'preact/hooks';

/**
 * Calls `tick` every `ms` milliseconds while the page is visible
 * (`document.visibilityState`, Page Visibility API), never while the tab is
 * hidden or minimised, and once at once when it becomes visible again, so a
 * dashboard left in a background tab costs no request. `ms` null: no polling.
 */
export function useVisiblePoll(tick: () => void, ms: number | null): void {
  useEffect(() => {
    if (ms === null) return;
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      if (timer === undefined) timer = setInterval(tick, ms);
    };
    const stop = () => {
      clearInterval(timer);
      timer = undefined;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') {
        tick();
        start();
      } else stop();
    };
    if (document.visibilityState === 'visible') start();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stop();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [tick, ms]);
}
