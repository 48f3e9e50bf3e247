import { createTrackerScriptHandler } from '../handlers/tracker-script.js';

/** The built tracker, put in at bundle time by the CDK stack (esbuild `define`). */
declare const __FOOTFALL_TRACKER__: string;

/**
 * Lambda entry of `GET /v.js` (its function URL, and the HTTP API's route for
 * snippets installed before). `EVENT_URL`, set by the stack to the event
 * function's URL (`lib/functions.ts`), is where the served script posts.
 */
export const handler = createTrackerScriptHandler(__FOOTFALL_TRACKER__, { eventUrl: process.env.EVENT_URL });
