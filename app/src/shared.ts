import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Capabilities } from './api.js';

/**
 * The shared view of a site (docs/app.md "Shared links"): the link's name, or
 * null on the signed-in app. Pages and panels read it to leave out what a
 * link does not open: navigation to other pages and sites, settings, payments,
 * CSV downloads; and what the deployment answers, as its link was told (`capabilities.ts`).
 */
export interface SharedView {
  name: string;
  capabilities: Capabilities;
}

export const SharedContext = createContext<SharedView | null>(null);

export const useShared = (): SharedView | null => useContext(SharedContext);
