import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm test` once left `/tmp/cdk.out*` behind, one per CDK App. This
 * file gives itself a temp directory of its own (so other tests and other
 * runs on the machine cannot disturb the listing), synthesizes stacks the way
 * the infrastructure tests do, and lists the directory before and after.
 */
describe('infrastructure tests leave no temp files', () => {
  const previous = process.env.TMPDIR;
  const own = mkdtempSync(join(tmpdir(), 'ff-tmpdir-check-'));
  afterAll(() => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(own, { recursive: true, force: true });
  });

  it('synth() and testApp() write their cloud assemblies to directories that removeSynthOutputs removes', async () => {
    process.env.TMPDIR = own;
    expect(tmpdir()).toBe(own);
    const { synth, testApp, removeSynthOutputs } = await import('./synth.js');
    expect(readdirSync(own)).toEqual([]);
    const synthesized = synth({ bundle: false });
    testApp({ context: { app: 'true' } });
    const during = readdirSync(own);
    // Both assemblies are ours (named ff-cdk-out-*), none is CDK's own cdk.outXXXXXX.
    expect(during).toHaveLength(2);
    expect(during.every((d) => d.startsWith('ff-cdk-out-'))).toBe(true);
    expect(
      readdirSync(
        join(
          own,
          during.find((d) => readdirSync(join(own, d)).length > 0)!,
        ),
      ),
    ).toContain('manifest.json');
    expect(synthesized.template.toJSON()).toHaveProperty('Resources');
    removeSynthOutputs();
    expect(readdirSync(own)).toEqual([]);
  }, 120_000);
});
