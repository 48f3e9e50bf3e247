import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/**
 * The shared view of a site (docs/app.md "Shared links"): the link's name, or
 * null on the signed-in app. Pages and panels read it to leave out what a
 * link does not open: navigation to other pages and sites, settings, payments,
 * CSV downloads.
 */
export const SharedContext = createContext<{ name: string } | null>(null);

export const useShared = (): { name: string } | null => useContext(SharedContext);
