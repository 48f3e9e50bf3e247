import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { appSourceHash, firstPageAssets } from '../../app/build.js';

const dir = mkdtempSync(join(tmpdir(), 'ff-app-dist-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the app build', () => {
  it('counts the scripts, preloads and stylesheets of index.html as the first page, not lazy chunks', () => {
    mkdirSync(join(dir, 'assets'));
    const files = {
      'index-a.js': 'console.log(1);'.repeat(50),
      'vendor-b.js': 'let x = 2;'.repeat(80),
      'index-c.css': 'body{color:red}'.repeat(40),
      'lazy-d.js': 'never loaded first',
    };
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, 'assets', name), body);
    writeFileSync(
      join(dir, 'index.html'),
      `<!doctype html><head><script type="module" crossorigin src="/assets/index-a.js"></script>
<link rel="modulepreload" crossorigin href="/assets/vendor-b.js"><link rel="stylesheet" crossorigin href="/assets/index-c.css"></head>`,
    );
    const assets = firstPageAssets(dir);
    expect(assets.map((a) => a.file)).toEqual(['/assets/index-a.js', '/assets/vendor-b.js', '/assets/index-c.css']);
    expect(assets[0]).toEqual({
      file: '/assets/index-a.js',
      raw: files['index-a.js'].length,
      gzip: gzipSync(files['index-a.js'], { level: 9 }).length,
    });
  });

  it('hashes the sources the same way twice (so an unchanged app is not rebuilt)', () => {
    expect(appSourceHash()).toMatch(/^[0-9a-f]{64}$/);
    expect(appSourceHash()).toBe(appSourceHash());
  });
});
