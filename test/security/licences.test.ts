import { describe, expect, it } from 'vitest';
import { onlyCopyleft, shippedPackages, type ShippedPackage } from '../../scripts/licences.js';

/** The dependency review (docs/security.md): nothing GNU-licensed ships in a Lambda bundle or the app. */

describe('licences of what ships', () => {
  it.each([
    ['MIT', false],
    ['Apache-2.0', false],
    ['(MIT OR GPL-3.0)', false],
    ['GPL-3.0', true],
    ['AGPL-3.0-or-later', true],
    ['LGPL-2.1-only', true],
    ['GPL-2.0 OR LGPL-3.0', true],
  ] as const)('%s is GNU-only: %s', (licence, refused) => {
    expect(onlyCopyleft(licence)).toBe(refused);
  });

  it('every package bundled into a function or the app, or provided by the runtime, has a licence and none is GNU-only', async () => {
    const packages = await shippedPackages();
    const by = (name: string): ShippedPackage | undefined => packages.find((p) => p.name === name);
    // What the bundles are known to hold: the review reads the real bundles, not package.json.
    expect(by('ua-parser-js')).toMatchObject({ version: expect.stringMatching(/^1\./), licence: 'MIT' });
    expect(by('ua-parser-js')?.shippedIn).toContain('event');
    expect(by('stripe')?.shippedIn).toContain('webhook');
    expect(by('@modelcontextprotocol/sdk')?.shippedIn).toContain('mcp');
    expect(by('preact')?.shippedIn).toContain('app');
    expect(by('@aws-sdk/client-dynamodb')?.shippedIn).toEqual(['runtime']);
    // The filtered reports' engine ships in the functions that read or write the visit table (its native
    // library in their layer, `lib/visit-table.ts`); the report and MCP functions invoke the filtered one.
    expect(by('@duckdb/node-api')).toMatchObject({ licence: 'MIT' });
    expect(by('@duckdb/node-api')?.shippedIn).toEqual(['filtered', 'operations']);
    // Tools that never ship are not in the list.
    for (const tool of ['vitest', 'aws-cdk-lib', 'dynalite', 'commander']) expect(by(tool), tool).toBeUndefined();
    const refused = packages.filter((p) => p.licence === 'UNKNOWN' || onlyCopyleft(p.licence));
    expect(refused).toEqual([]);
  }, 300_000);
});
