import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { CountryDatabase } from '../../lambdas/adapters/country-database.js';
import { importEventLines } from '../../local/import-events.js';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';
import { CHROME_UA } from '../support/events.js';
import { memoryTable } from '../support/dynamo.js';

describe('imported events get a country from their address', () => {
  let table: Awaited<ReturnType<typeof memoryTable>>;
  let dir: string;
  beforeAll(async () => {
    table = await memoryTable([{ domain: 'example.com' }]);
    dir = await mkdtemp(join(tmpdir(), 'import-country-'));
  });
  afterAll(async () => {
    await table.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['an address and no country: the database answers', { ip: '193.0.6.139' }, 'NL'],
    ['a country on the line wins, as a CDN header does', { ip: '193.0.6.139', country: 'de' }, 'DE'],
    ['a line country that names none falls back to the address', { ip: '8.8.8.8', country: 'XX' }, 'US'],
    ['a documentation address: unknown', { ip: '203.0.113.7' }, null],
    ['no address, no country', {}, null],
  ])('%s', async (_label, fields, expected) => {
    const stream = join(dir, `stream-${expected ?? 'none'}-${Object.keys(fields).join('-')}`);
    const line = JSON.stringify({
      n: 'pageview',
      u: 'https://example.com/',
      s: 'example.com',
      ts: '2026-11-20T10:00:00Z',
      ua: CHROME_UA,
      ...fields,
    });
    const summary = await importEventLines(table.conn, stream, [line], {
      countries: CountryDatabase.open(PACKAGED_COUNTRY_DATABASE),
    });
    expect(summary.accepted).toBe(1);
    const { records } = await readLocalStream(stream, 0, 10);
    const event = JSON.parse(records[0]!.data.toString()) as { country: string | null };
    expect(event.country).toBe(expected);
    expect(records[0]!.data.toString()).not.toContain((fields as { ip?: string }).ip ?? '\u0000');
  });
});
