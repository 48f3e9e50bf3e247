import { describe, expect, it } from 'vitest';
import { synth } from '../infra/synth.js';
import { DATA_LAYOUT } from '../../lambdas/domain/site.js';
import { STACK_VERSION_OUTPUTS } from '../../lambdas/domain/upgrade.js';
import { RELEASE_VERSION } from '../../lib/release.js';

describe('the stack says what it runs (footfall upgrade check --aws reads it)', () => {
  it('has the Version and DataLayout outputs of this release', () => {
    const { template } = synth({ bundle: false });
    template.hasOutput(STACK_VERSION_OUTPUTS.version, { Value: RELEASE_VERSION });
    template.hasOutput(STACK_VERSION_OUTPUTS.layout, { Value: String(DATA_LAYOUT) });
    expect(STACK_VERSION_OUTPUTS).toEqual({ version: 'Version', layout: 'DataLayout' });
  });
});
