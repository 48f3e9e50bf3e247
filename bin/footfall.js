#!/usr/bin/env node
// The CLI runs from TypeScript sources through tsx, so a fresh clone needs no build step.
import { register } from 'tsx/esm/api';

// Locally, EMF metric lines on stdout are noise and the SDK's Node-version notice is not news.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A terminal wants warnings and errors, not a JSON line per request.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
