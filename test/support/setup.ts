import { afterAll } from 'vitest';
import { removeSynthOutputs } from './synth-outputs.js';

// Run before every test file (vitest's setupFiles). The suites run files in a shared process (`isolate: false`),
// where a module's top level runs once per process, not once per file: per-file clean-up is registered here.
afterAll(removeSynthOutputs);
