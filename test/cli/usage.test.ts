import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { main } from '../../cli/main.js';
import { baseUrl } from '../../cli/urls.js';
import { parseArgs, parseFields, UsageError } from '../../cli/usage.js';

/** Runs the CLI in this process (validation happens before any store is opened) and returns its exit code and output. */
async function run(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const status = await main(['--data', '/nonexistent/footfall-usage-test', ...args]);
    return { status, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

/**
 * Every bad value names the option or argument, the value given
 * and what is allowed, on one line, with exit code 2 — from one mapping of
 * zod issues (`cli/usage.ts`), whatever the command.
 */
describe('usage errors name the option, the value and what is allowed', () => {
  it.each([
    [['start', '--port', 'abc'], '--port "abc" is not valid: must be a whole number from 0 to 65535'],
    [['serve', '--port', '99999'], '--port "99999" is not valid: must be a whole number from 0 to 65535'],
    [
      ['serve', '--sessionize-interval', '-5'],
      '--sessionize-interval "-5" is not valid: must be a whole number from 0 to 3600000',
    ],
    [['demo', '--days', '0'], '--days "0" is not valid: must be a whole number from 1 to 3650'],
    [
      ['demo', '--visits-per-day', 'many'],
      '--visits-per-day "many" is not valid: must be a whole number from 1 to 100000',
    ],
    [['start', '--days', '1.5'], '--days "1.5" is not valid: must be a whole number from 1 to 3650'],
    [
      ['sites', 'add', 'example.com', '--timezone', 'UTC', '--account', 'acme', '--rate-limit', 'abc'],
      '--rate-limit "abc" is not valid: must be a whole number from 1 to 1000000',
    ],
    [
      ['sites', 'add', 'example.com', '--timezone', 'UTC', '--account', 'acme', '--lookback-days', '0'],
      '--lookback-days "0" is not valid: must be a whole number from 1 to 365',
    ],
    [
      ['sites', 'set', 'example.com', '--lookback-days', 'ten'],
      '--lookback-days "ten" is not valid: must be a whole number from 1 to 365',
    ],
    [
      ['sites', 'set', 'example.com', '--timezone', 'Mars/Olympus'],
      '--timezone "Mars/Olympus" is not valid: must be an IANA timezone such as Europe/Berlin',
    ],
    // A bad domain is reported as a bad domain, even when --timezone is missing too.
    [
      ['sites', 'add', 'bad_domain', '--account', 'acme'],
      '<domain> "bad_domain" is not valid: must be a domain name such as example.com',
    ],
    [
      ['sites', 'add', 'example.com', '--account', 'acme'],
      '--timezone is required: must be an IANA timezone such as Europe/Berlin',
    ],
    [
      ['sites', 'add', 'example.com', '--timezone', 'UTC'],
      '--account is required: must be 1-64 letters, digits, dot, dash or underscore',
    ],
    [
      ['accounts', 'add', 'bad id!'],
      '<id> "bad id!" is not valid: must be 1-64 letters, digits, dot, dash or underscore',
    ],
    [
      ['providers', 'connect', 'paypal', '--site', 'example.com', '--webhook-secret', 'whsec_0123456789'],
      '<provider> "paypal" is not valid: must be one of: stripe, lemonsqueezy, paddle, polar',
    ],
    [
      ['providers', 'connect', 'stripe', '--site', 'example.com', '--webhook-secret', 'short'],
      '--webhook-secret (the value given) is not valid: must be at least 8 characters',
    ],
    [
      [
        'providers',
        'connect',
        'stripe',
        '--site',
        'example.com',
        '--webhook-secret',
        'whsec_0123456789',
        '--url',
        'ftp://x',
      ],
      '--url "ftp://x" is not valid: must be an http:// or https:// address',
    ],
    [
      ['providers', 'list', '--site', 'http://example.com/'],
      '--site "http://example.com/" is not valid: must be a domain name such as example.com',
    ],
    [
      ['import', 'payments', 'x.jsonl', '--site', 'nope'],
      '--site "nope" is not valid: must be a domain name such as example.com',
    ],
    [
      ['users', 'add', 'bob', '--account', 'acme'],
      '<email> "bob" is not valid: must be an email address such as ana@example.com',
    ],
    [['keys', 'create', '--account', 'acme', '--name', ' '], '--name " " is not valid: must be at least 1 character'],
    [['fx', 'rate', 'EURO'], '<currency> "EURO" is not valid: must be an ISO 4217 code such as EUR'],
    [['fx', 'rate', 'EUR', '--date', '2026-13-01'], '--date "2026-13-01" is not valid: must be a date YYYY-MM-DD'],
    [
      ['rebuild', '--site', 'bad_domain!'],
      '--site "bad_domain!" is not valid: must be a domain name such as example.com',
    ],
    [['sql', ''], '<query> "" is not valid: must be a query (the query is empty)'],
  ])('%j', async (args, message) => {
    const result = await run(...args);
    expect(result).toEqual({ status: 2, stdout: '', stderr: `error: ${message}\n` });
  });

  it("leaves commander's own messages for choices and unknown options, which already say all three", async () => {
    expect(
      await run('sites', 'add', 'x.com', '--timezone', 'UTC', '--account', 'acme', '--attribution', 'linear'),
    ).toMatchObject({
      status: 2,
      stderr:
        "error: option '--attribution <model>' argument 'linear' is invalid. Allowed choices are last_non_direct, last_touch, first_touch.\n",
    });
  });
});

describe('help and version', () => {
  it('footfall --version prints the package version', async () => {
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;
    expect(await run('--version')).toEqual({ status: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('sites add --help says --timezone and --account are required and what they take', async () => {
    const { status, stdout } = await run('sites', 'add', '--help');
    expect(status).toBe(0);
    expect(stdout.replace(/\s+/g, ' ')).toContain(
      "--timezone <iana> required: IANA timezone of the site's days, e.g. Europe/Berlin or UTC",
    );
    expect(stdout.replace(/\s+/g, ' ')).toContain('--account <id> required: account that owns the site');
  });
});

describe('parseArgs / parseFields', () => {
  it('throw UsageError, and pass values through on success', () => {
    expect(parseArgs(z.coerce.number().int().min(1), '7', '--n')).toBe(7);
    expect(() => parseArgs(z.coerce.number().int().min(1), 'x', '--n')).toThrow(
      new UsageError('--n "x" is not valid: must be a whole number of at least 1'),
    );
    expect(() =>
      parseFields(z.object({ a: z.enum(['p', 'q']) }), { a: 'r' }, { a: { name: '--a', given: 'r' } }),
    ).toThrow('--a "r" is not valid: must be one of: p, q');
  });
});

describe('webhook URL base (providers connect)', () => {
  const ctx = (aws: boolean) => ({
    dataDir: '/nonexistent/footfall-usage-test',
    json: false,
    aws: aws ? { table: 't' } : null,
    print: () => {},
    printJson: () => {},
  });
  it("is --url when given, the local server's otherwise, and unknown (null) for a deployed stack without --url", async () => {
    expect(await baseUrl(ctx(false), 'https://stats.example.com/')).toBe('https://stats.example.com');
    expect(await baseUrl(ctx(true), 'https://abc.execute-api.eu-west-1.amazonaws.com/')).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com',
    );
    expect(await baseUrl(ctx(true), undefined)).toBeNull();
    const port = process.env.PORT;
    process.env.PORT = '9911';
    try {
      expect(await baseUrl(ctx(false), undefined)).toBe('http://127.0.0.1:9911');
    } finally {
      if (port === undefined) delete process.env.PORT;
      else process.env.PORT = port;
    }
  });
});
