import { createTrackerScriptHandler } from '../handlers/tracker-script.js';

/** The built tracker, put in at bundle time by the CDK stack (esbuild `define`). */
declare const __FOOTFALL_TRACKER__: string;

/** Lambda entry of `GET /v.js`. */
export const handler = createTrackerScriptHandler(__FOOTFALL_TRACKER__);
