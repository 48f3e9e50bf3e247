import type { Capabilities } from './api.js';

/** The browser storage key of what this deployment answered last (`docs/app.md`, "What the deployment answers"). */
const KEY = 'footfall.filtered_reports';

/**
 * Keeps whether the deployment answers filtered reports, as the session check last said, for the next time the
 * app opens: `start.ts` runs before that check returns. Storage that refuses (a private window's quota, disabled
 * storage) keeps nothing, which only costs the early start of a filtered address's first requests.
 */
export function rememberCapabilities(capabilities: Capabilities): void {
  try {
    localStorage.setItem(KEY, capabilities.filtered_reports ? '1' : '0');
  } catch {
    // Nothing to keep it in: the next open asks filtered requests only after the session check.
  }
}

/**
 * Whether the deployment answered filtered reports when the app last learned it: false when it never did, so a
 * filtered address is not asked before the session check says the deployment answers it (a deployment without
 * the engine answers such a request 400).
 */
export function rememberedFilteredReports(): boolean {
  try {
    return localStorage.getItem(KEY) === '1';
  } catch {
    return false;
  }
}
