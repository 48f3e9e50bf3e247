/**
 * The app's first statements, imported before every other module of
 * `main.tsx` so that they run before the rest of the bundle is evaluated
 * (components, uPlot, the formatters' Intl objects, whose first use in a new
 * tab loads ICU's data): the session check and, on a dashboard, its chart
 * and totals requests leave now (`docs/app.md` "Site dashboard").
 */
import { api } from './api.js';
import { startDashboardEarly } from './dashboard-requests.js';
import { SESSION_CHECK, startEarly } from './early.js';

startEarly(SESSION_CHECK, api.me);
startDashboardEarly(location.pathname, location.search);
