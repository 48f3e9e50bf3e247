import { rmSync } from 'node:fs';

/**
 * The cloud-assembly directories `testApp` (test/infra/synth.ts) made in the running test file. Kept apart from
 * synth.ts, which loads aws-cdk-lib, so that test/support/setup.ts can remove them after every file without loading
 * the CDK into files that never synthesize.
 */
const outdirs: string[] = [];

/** Records a cloud-assembly directory to remove after the test file. */
export function recordSynthOutput(dir: string): void {
  outdirs.push(dir);
}

/** Removes every cloud assembly recorded in this test file so far. */
export function removeSynthOutputs(): void {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
