import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * How far below (or above) the window an element counts as seen: the rows are asked for a little before the panel
 * scrolls in, so they are usually there when it arrives, while a page that stays at its top asks nothing.
 */
export const SEEN_MARGIN_PX = 200;

/**
 * Whether the element `ref` holds has come within `SEEN_MARGIN_PX` of the window (an IntersectionObserver), and
 * stays true from then on; true at once where the browser has no IntersectionObserver. `docs/app.md` "Properties"
 * says why the Properties panel waits for it.
 */
export function useSeen<T extends Element>(): { ref: RefObject<T | null>; seen: boolean } {
  const ref = useRef<T | null>(null);
  const [seen, setSeen] = useState(() => typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const element = ref.current;
    if (seen || !element) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setSeen(true);
      },
      { rootMargin: `${SEEN_MARGIN_PX}px 0px` },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [seen]);
  return { ref, seen };
}
