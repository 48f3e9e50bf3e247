import { afterAll } from 'vitest';
import { removeSynthOutputs } from './synth-outputs.js';

// Run before every test file (vitest's setupFiles). Per-file clean-up is registered here rather than at the top level
// of a shared module: with `isolate: false` a module's top level runs once per worker, not once per file.
afterAll(removeSynthOutputs);
