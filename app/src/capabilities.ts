import { useAuth } from './auth.js';
import { useShared } from './shared.js';

/**
 * Whether this deployment answers filtered reports and the properties reports (`docs/app.md`, "What the
 * deployment answers"): a shared view's from its opened link, else the signed-in user's (`GET /api/app/me`). A
 * page that knows neither (none reads reports) assumes it does. Without them the app offers no filter (no row
 * is a link, no Filter button), reads the address's filters as none and says so once, and the Properties panel
 * says what it needs instead of asking.
 */
export function useFilteredReports(): boolean {
  const shared = useShared();
  const { me } = useAuth();
  return (shared ? shared.capabilities : me?.capabilities)?.filtered_reports ?? true;
}
