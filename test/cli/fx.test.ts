import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliInProcess } from '../support/cli.js';

// Three days of the ECB's eurofxref-hist.csv, copied unchanged (data/fx/SOURCES.md).
const ECB_CSV = fileURLToPath(new URL('../fixtures/fx/eurofxref-hist-2026-04.csv', import.meta.url));

describe('footfall fx', async () => {
  let dir = '';
  let dataDir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-fx-'));
    dataDir = join(dir, 'data');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCliInProcess(['--data', dataDir, ...args]);

  it('updates the table from an ECB CSV, and fx rate shows the override', async () => {
    const before = await cli('--json', 'fx', 'rate', 'EUR', '--date', '2026-04-13');
    expect(before.status).toBe(0);
    // The bundled table: the first ECB business day of April 2026.
    expect(JSON.parse(before.stdout)).toEqual({
      currency: 'EUR',
      date: '2026-04-13',
      usd_per_unit: 1.1605,
      rate_date: '2026-04-01',
      rate_age_days: 12,
    });
    // A rate more than a week old (`docs/payments.md` "Money") is said, on stderr, with how to get newer ones.
    expect(before.stderr).toBe(
      'warning: the EUR rate used for 2026-04-13 is 12 days old (rate of 2026-04-01); newer rates: footfall fx update --file <ECB eurofxref-hist.csv> (data/fx/SOURCES.md)\n',
    );

    const update = await cli('--json', 'fx', 'update', '--file', ECB_CSV);
    expect(update.status).toBe(0);
    expect(JSON.parse(update.stdout)).toEqual({ days: 3, currencies: 29, from: '2026-04-09', to: '2026-04-13' });

    const after = await cli('--json', 'fx', 'rate', 'eur', '--date', '2026-04-13');
    expect(JSON.parse(after.stdout)).toEqual({
      currency: 'EUR',
      date: '2026-04-13',
      usd_per_unit: 1.1684,
      rate_date: '2026-04-13',
      rate_age_days: 0,
    });
    expect(after.stderr).toBe('');
    // Saturday 2026-04-11: Friday's rate. GBP = 1.1711 / 0.87105.
    expect(await cli('fx', 'rate', 'GBP', '--date', '2026-04-11')).toMatchObject({
      status: 0,
      stdout: '1 GBP = 1.3444693 USD on 2026-04-11 (rate of 2026-04-10, 1 day old)\n',
      stderr: '',
    });
    // Eight days after the last table day: one day past the week, so a warning; the text says the age too.
    expect(await cli('fx', 'rate', 'EUR', '--date', '2026-04-21')).toEqual({
      status: 0,
      stdout: '1 EUR = 1.1684 USD on 2026-04-21 (rate of 2026-04-13, 8 days old)\n',
      stderr:
        'warning: the EUR rate used for 2026-04-21 is 8 days old (rate of 2026-04-13); newer rates: footfall fx update --file <ECB eurofxref-hist.csv> (data/fx/SOURCES.md)\n',
    });
    expect((await cli('fx', 'rate', 'EUR', '--date', '2026-04-20')).stderr).toBe('');
  });

  it('updates from our JSON format and prints a text summary', async () => {
    const file = join(dir, 'rates.json');
    await writeFile(
      file,
      JSON.stringify({
        source: 'test',
        unit: 'USD per 1 unit of currency',
        rates: { '2026-04-14': { EUR: 1.17, CHF: 1.26 } },
      }),
    );
    expect(await cli('fx', 'update', '--file', file)).toMatchObject({
      status: 0,
      stdout: 'stored 1 days of rates for 2 currencies (2026-04-14 to 2026-04-14)\n',
    });
    expect(JSON.parse((await cli('--json', 'fx', 'rate', 'CHF', '--date', '2026-04-20')).stdout)).toMatchObject({
      usd_per_unit: 1.26,
      rate_date: '2026-04-14',
      rate_age_days: 6,
    });
  });

  it.each([
    [
      'a cell that is not a rate',
      'bad.csv',
      'Date,USD,JPY\n2026-04-13,1.1684,abc\n',
      /bad\.csv: line 2: JPY "abc" is not a rate/,
    ],
    ['a CSV without a USD column', 'nousd.csv', 'Date,JPY\n2026-04-13,186.75\n', /no USD column/],
    ['JSON with a bad rate', 'bad.json', '{"rates":{"2026-04-13":{"EUR":"high"}}}', /rates\.2026-04-13\.EUR/],
  ])('exits 2 with one line for a bad file: %s', async (_what, name, content, message) => {
    const file = join(dir, name);
    await writeFile(file, content);
    const result = await cli('fx', 'update', '--file', file);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    [['fx', 'update', '--file', '/nonexistent/rates.csv'], /cannot read/],
    [['fx', 'update'], /--file/],
    [['fx', 'rate', 'EURO'], /<currency> "EURO" is not valid: must be an ISO 4217 code/],
    [['fx', 'rate', 'EUR', '--date', '2026-13-01'], /--date "2026-13-01" is not valid: must be a date/],
  ])('exits 2 for bad arguments: %j', async (args, message) => {
    const result = await cli(...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 1 for a currency the table does not know', async () => {
    expect(await cli('fx', 'rate', 'XYZ')).toMatchObject({ status: 1, stderr: 'error: no USD rate for XYZ\n' });
  });
});
