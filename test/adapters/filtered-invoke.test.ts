import { InvokeCommand, LambdaClient, TooManyRequestsException } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import type { InvokeCommandOutput } from '@aws-sdk/client-lambda';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { filteredVisitsByInvoke, fromWire, toWire } from '../../lambdas/adapters/filtered-wire.js';
import { lambdaFilteredVisits } from '../../lambdas/adapters/lambda-filtered-visits.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import { createFilteredHandler } from '../../lambdas/handlers/filtered.js';
import { errorResponse } from '../../lambdas/handlers/http.js';
import type { VisitRow } from '../../lambdas/domain/visit-table.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../../lambdas/ports.js';

/**
 * The filtered function's seam (`docs/data-model.md`, "Filtered reports"): the report and MCP functions
 * invoke it with `{method, args}` and decode its result (`lambdaFilteredVisits`, `filteredVisitsByInvoke`),
 * it validates the call and runs the engine (`createFilteredHandler`). What JSON cannot carry (Maps, Sets,
 * an argument left out) survives the trip; a failed invocation is the report API's 503.
 */

type Method = (typeof FILTERED_VISITS_METHODS)[number];
type Results = { [K in Method]: Awaited<ReturnType<FilteredVisits[K]>> };

const row: VisitRow = {
  visit_id: 'v1',
  visitor_id: 'u1',
  day: '2026-04-02',
  start_ms: 1_775_000_000_000,
  pageviews: 3,
  bounce: false,
  timed: true,
  duration_ms: 61_000,
  dimensions: { channel: 'Search', referrer_host: null } as VisitRow['dimensions'],
  landing_page: '/',
  exit_page: null,
  pages: ['/', '/pricing'],
  goals: ['Signup', 'Outbound Link: Click'],
  links: ['https://example.com/$map'],
  props: [
    ['plan', 'pro'],
    ['$map', '__proto__'],
  ],
};
const value = { visits: 4, payments: 1, cents: 999, customers: 1 };

/** One result of each method of the port, typed by it: a method added to the port needs its sample here. */
const RESULTS: Results = {
  totals: { visitors: 2, sessions: 3, pageviews: 7, bounces: 1, timed_visits: 2, duration_ms: 90_000 },
  payments: { payments: 2, cents: 1_998, customers: 2, matched_payments: 1, matched_cents: 999, converted: 1 },
  breakdown: new Map([
    ['Search', value],
    ['(none)', { ...value, visits: 0 }],
    ['$set', value],
    ['constructor', value],
  ]),
  input: {
    rows: [row, { ...row, visit_id: 'v2', props: undefined }],
    payments: [
      { ts: 1_775_000_100_000, day: '2026-04-02', cents: 999, customer: 'c1', failed: false, visit: row },
      { ts: 1_775_000_200_000, day: '2026-04-02', cents: -100, customer: 'c2', failed: true, visit: null },
    ],
  },
  propBreakdown: new Map([['pro', value]]),
  propKeys: new Map([['plan', { visitors: 1, visits: 2, payments: 1, cents: 999 }]]),
  series: {
    visits: [{ period: '2026-04-02', visits: 3, pageviews: 7, visitors: 2 }],
    payments: [{ period: '2026-04-02', payments: 1, cents: 999 }],
  },
  goals: {
    visitors: 2,
    goals: new Map([['Signup', { visits: 1, completions: 2, visitors: 1, payments: 1, cents: 999, customers: 1 }]]),
  },
  links: {
    visitors: 2,
    goals: new Map([
      ['https://example.com/$map', { visits: 1, completions: 2, visitors: 1, payments: 1, cents: 999, customers: 1 }],
    ]),
  },
  paymentList: { total: 2, keys: ['stripe:ch_1', 'paddle:txn_2'] },
  firstPayers: new Set(['c1', 'c2']),
};

/** What crosses a Lambda invocation: the JSON text of the encoded value. */
const roundTrip = (v: unknown) => fromWire(JSON.parse(JSON.stringify(toWire(v))));

describe('the wire form of filtered calls', () => {
  it.each(FILTERED_VISITS_METHODS)("round-trips %s's result", (method) => {
    const back = roundTrip(RESULTS[method]);
    expect(back).toStrictEqual(expect.anything());
    expect(back).toEqual(RESULTS[method]);
    // Maps and Sets come back as Maps and Sets, not as objects or arrays.
    if (RESULTS[method] instanceof Map) expect(back).toBeInstanceOf(Map);
    if (RESULTS[method] instanceof Set) expect(back).toBeInstanceOf(Set);
  });

  it('keeps an argument left out before one given, and keys of visitors text as plain data', () => {
    const args = [
      'shop.test',
      { kind: 'and', filters: [] },
      { from: '2026-04-01', to: '2026-04-30' },
      undefined,
      ['Signup'],
    ];
    expect(roundTrip(args)).toEqual(args);
    const back = roundTrip({ __proto__: null, constructor: 1, $map: 2, $$x: 3 }) as Record<string, unknown>;
    expect({ ...back }).toEqual({ constructor: 1, $map: 2, $$x: 3 });
    expect(Object.getPrototypeOf(back)).toBeNull();
  });

  it('refuses what it would change silently (a class instance)', () => {
    expect(() => toWire(new Date(0))).toThrow(TypeError);
  });

  it('round-trips any nesting of Maps, Sets, arrays and objects (fast-check)', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`filtered wire property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.bigInt()),
        fc.array(tie('tree')),
        fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('$map', '$set', '$undefined', '$$a')), tie('tree')),
        fc.array(fc.tuple(fc.string(), tie('tree'))).map((e) => new Map(e)),
        fc.array(fc.oneof(fc.string(), fc.integer())).map((e) => new Set(e)),
      ),
    }));
    fc.assert(
      fc.property(tree, (v) => {
        expect(roundTrip(v)).toEqual(v);
      }),
      { seed, numRuns: 300 },
    );
  });
});

/** An engine whose each method answers its sample result, recording its arguments. */
function sampleEngine() {
  const calls: [string, unknown[]][] = [];
  const engine = Object.fromEntries(
    FILTERED_VISITS_METHODS.map((m) => [
      m,
      async (...args: unknown[]) => {
        calls.push([m, args]);
        return RESULTS[m];
      },
    ]),
  ) as unknown as FilteredVisits;
  return { engine, calls };
}

/** An Invoke response's payload: the JSON bytes of `value` (the SDK's blob type adds only helpers). */
const payload = (value: unknown) =>
  new TextEncoder().encode(JSON.stringify(value)) as NonNullable<InvokeCommandOutput['Payload']>;

const range = { from: '2026-04-01', to: '2026-04-09' };
const filter = { kind: 'and', filters: [] } as unknown as Parameters<FilteredVisits['totals']>[1];

describe('the filtered function', () => {
  const lambda = mockClient(LambdaClient);
  afterEach(() => lambda.reset());

  it('is invoked synchronously with {method, args}, and each method answers what the engine answered', async () => {
    const { engine, calls } = sampleEngine();
    const handler = createFilteredHandler(engine);
    lambda.on(InvokeCommand).callsFake(async (input: { Payload: Uint8Array }) => ({
      StatusCode: 200,
      Payload: payload(await handler(JSON.parse(new TextDecoder().decode(input.Payload)))),
    }));
    const port = lambdaFilteredVisits(new LambdaClient({ region: 'eu-west-1' }), 'footfall-filtered');
    for (const method of FILTERED_VISITS_METHODS) {
      const args = ['shop.test', filter, range, undefined, ['Signup']];
      const answer = await (port[method] as (...a: unknown[]) => Promise<unknown>)(...args);
      expect(answer, method).toEqual(RESULTS[method]);
      expect(calls.at(-1), method).toEqual([method, args]);
    }
    const sent = lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input);
    expect(sent).toHaveLength(FILTERED_VISITS_METHODS.length);
    for (const input of sent) {
      expect(input).toMatchObject({ FunctionName: 'footfall-filtered', InvocationType: 'RequestResponse' });
      expect(Object.keys(JSON.parse(new TextDecoder().decode(input.Payload as Uint8Array)))).toEqual([
        'method',
        'args',
      ]);
    }
  });

  it("returns a day's visit rows beyond Lambda's 6 MB of JSON gzipped, under it, and the caller unpacks them", async () => {
    // A busy day of the bench site (1M visits a month): 33,000 rows, each with its own ids, time and pages.
    const rows: VisitRow[] = Array.from({ length: 33_000 }, (_, i) => ({
      ...row,
      visit_id: `v${i.toString(36)}${(i * 7919).toString(36)}`,
      visitor_id: `u${(i * 104_729).toString(36)}`,
      start_ms: row.start_ms + i * 2_617,
      duration_ms: (i * 37) % 600_000,
      pages: ['/', `/blog/post-${i % 900}`],
    }));
    const input = { rows, payments: [] };
    const engine = { input: async () => input } as unknown as FilteredVisits;
    const handler = createFilteredHandler(engine);
    const returned = JSON.stringify(await handler({ method: 'input', args: toWire(['shop.test', filter, range]) }));
    expect(JSON.stringify(toWire(input)).length).toBeGreaterThan(6 * 1024 * 1024);
    expect(returned.length).toBeLessThan(6 * 1024 * 1024);
    console.log(
      `a day's ${rows.length} rows: ${JSON.stringify(toWire(input)).length} B of JSON, ${returned.length} B returned`,
    );
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(JSON.parse(returned)) });
    const port = lambdaFilteredVisits(new LambdaClient({ region: 'eu-west-1' }), 'footfall-filtered');
    expect(await port.input('shop.test', filter, range)).toEqual(input);
  });

  it('refuses an event that is not a call of a method of the port', async () => {
    const handler = createFilteredHandler(sampleEngine().engine);
    await expect(handler({ method: 'close', args: [] })).rejects.toThrow(/method/);
    await expect(handler({ method: 'totals' })).rejects.toThrow(/args/);
    await expect(handler('totals')).rejects.toThrow();
  });

  it.each([
    ['a function error (the engine threw)', { StatusCode: 200, FunctionError: 'Unhandled', errorType: 'Error' }],
    ['a timeout', { StatusCode: 200, FunctionError: 'Unhandled', errorType: 'Sandbox.Timedout' }],
  ])('answers 503 for %s', async (_name, { StatusCode, FunctionError, errorType }) => {
    lambda.on(InvokeCommand).resolves({
      StatusCode,
      FunctionError,
      Payload: payload({ errorType, errorMessage: 'boom' }),
    });
    const port = lambdaFilteredVisits(new LambdaClient({ region: 'eu-west-1' }), 'footfall-filtered');
    const error = await port.totals('shop.test', filter, range).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(errorResponse(error, { format: 'json', unexpectedStatus: 503 })).toMatchObject({
      statusCode: 503,
      body: JSON.stringify({ error: 'data could not be read or written, retry later' }),
    });
  });

  it('answers 503 when Lambda refuses the invocation (throttled), as a failing engine in the function answered', async () => {
    lambda.on(InvokeCommand).rejects(
      new TooManyRequestsException({
        message: 'Rate exceeded',
        $metadata: {},
        Type: 'User',
        Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      }),
    );
    const port = lambdaFilteredVisits(new LambdaClient({ region: 'eu-west-1', maxAttempts: 1 }), 'footfall-filtered');
    const error = await port.goals('shop.test', filter, range).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    // The same answer as an engine error the report handlers do not know (their unexpected status).
    const format = { format: 'json', unexpectedStatus: 503 } as const;
    expect(errorResponse(error, format)).toEqual(errorResponse(new Error('duckdb: IO Error'), format));
  });
});

describe('filteredVisitsByInvoke', () => {
  it('gives every method of the port, each one invocation', async () => {
    const seen: string[] = [];
    const port = filteredVisitsByInvoke(async (call) => {
      seen.push(call.method);
      return toWire(RESULTS[call.method]);
    });
    for (const method of FILTERED_VISITS_METHODS)
      expect(await (port[method] as (...a: unknown[]) => Promise<unknown>)('shop.test', filter, range)).toEqual(
        RESULTS[method],
      );
    expect(seen).toEqual([...FILTERED_VISITS_METHODS]);
  });
});
