import { App } from 'aws-cdk-lib';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';
import { Match } from 'aws-cdk-lib/assertions';
import { synth, type Synthesized } from './synth.js';

type Resource = { Properties: Record<string, unknown> };

/** The layer's files as staged in cdk.out (what `cdk deploy` zips and uploads). */
function layerFiles(s: Synthesized): string[] {
  const layer = Object.values(s.template.findResources('AWS::Lambda::LayerVersion'))[0] as Resource;
  const key = (layer.Properties.Content as { S3Key: string }).S3Key;
  const outdir = (s.stack.node.root as App).outdir;
  return readdirSync(join(outdir, `asset.${key.replace(/\.zip$/, '')}`)).sort();
}

const functionsOf = (s: Synthesized) =>
  Object.entries(s.template.findResources('AWS::Lambda::Function') as Record<string, Resource>);

describe('the IP-to-country database as a Lambda layer', () => {
  let main: Synthesized;
  let dir: string;
  beforeAll(async () => {
    main = synth({ bundle: false });
    dir = await mkdtemp(join(tmpdir(), 'country-layer-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('ships the packaged DB-IP Lite file and its licence, nothing else, for nodejs22.x on arm64', () => {
    main.template.resourceCountIs('AWS::Lambda::LayerVersion', 1);
    main.template.hasResourceProperties('AWS::Lambda::LayerVersion', {
      CompatibleRuntimes: ['nodejs22.x'],
      CompatibleArchitectures: ['arm64'],
      Description: Match.stringLikeRegexp(
        '^Footfall IP-to-country database: dbip-country\\.mmdb \\(country ipvAll\\), built \\d{4}-\\d\\d-\\d\\d$',
      ),
    });
    expect(layerFiles(main)).toEqual(['DBIP-LICENSE', 'dbip-country.mmdb']);
  });

  it('is attached to the event function alone, which is told where Lambda extracts it (/opt)', () => {
    const layerId = Object.keys(main.template.findResources('AWS::Lambda::LayerVersion'))[0];
    for (const [id, fn] of functionsOf(main)) {
      // CDK's own deploy-time handlers (the bucket notifications') have no environment at all.
      const env = (fn.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
      if (id.startsWith('event')) {
        expect(fn.Properties.Layers, id).toEqual([{ Ref: layerId }]);
        expect(env.GEO_DATABASE_PATH, id).toBe('/opt/dbip-country.mmdb');
      } else {
        expect(fn.Properties.Layers, id).toBeUndefined();
        expect(env.GEO_DATABASE_PATH, id).toBeUndefined();
      }
    }
  });

  it('takes the file of `-c geoDatabase=…` (what `footfall geo update` installed) instead', async () => {
    const installed = join(dir, 'geo');
    await mkdir(installed, { recursive: true });
    await copyFile(PACKAGED_COUNTRY_DATABASE, join(installed, 'country.mmdb'));
    const custom = synth({ config: { geoDatabase: join(installed, 'country.mmdb') }, bundle: false });
    expect(layerFiles(custom)).toEqual(['country.mmdb']);
    const event = functionsOf(custom).find(([id]) => id.startsWith('event'))?.[1];
    expect((event?.Properties.Environment as { Variables: Record<string, unknown> }).Variables.GEO_DATABASE_PATH).toBe(
      '/opt/country.mmdb',
    );
  });

  it('refuses to synthesize with a file that is not a country database', async () => {
    const bad = join(dir, 'bad.mmdb');
    await writeFile(bad, 'not a database');
    expect(() => synth({ config: { geoDatabase: bad }, bundle: false })).toThrow(/not a MaxMind DB/);
  });
});
