import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../lambdas/handlers/openapi.js';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { localPaths } from '../../local/service.js';
import { trackedEvent } from '../support/events.js';
import { SITE, scenarioService } from '../reports/scenario.js';

describe('docs/openapi.json', () => {
  it('is the document the API serves (regenerate with npm run docs:openapi)', () => {
    const file = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(openApiDocument());
  });
});

interface Operation {
  parameters?: Array<{
    name: string;
    in: 'path' | 'query';
    schema: { enum?: string[]; anyOf?: Array<{ enum?: string[]; pattern?: string }> };
  }>;
  responses: Record<string, { content?: { 'application/json': { schema: { $ref: string } } } }>;
}
type Document = { paths: Record<string, { get: Operation }>; components: { schemas: Record<string, object> } };

/** A validator of the document's response schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses), with formats checked. */
function validatorOf(doc: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    const { $schema: _ignored, ...body } = schema as Record<string, unknown>;
    ajv.addSchema(body, `#/components/schemas/${name}`);
  }
  return (ref: string, value: unknown) => {
    const validate = ajv.getSchema(ref)!;
    return validate(value) ? null : ajv.errorsText(validate.errors, { dataVar: 'response' });
  };
}

/** Visitor ids of the scenario (alice bought, bob paid in EUR, carol failed, dave before March) and erin, whose country is unknown. */
const VISITORS = ['alice-0001', 'bob-00000001', 'carol-000001', 'dave-0000001', 'erin-0000001'];
const MARCH = { from: '2026-03-01', to: '2026-03-31' };

/**
 * Generated clients trust the OpenAPI document, so every report
 * route's real responses must validate against it — in particular the nulls
 * (a payment without a visitor has null `visitor_id`, `visitor`, `touch` and
 * `first_touch`; a visit of unknown country has null `country`). The URLs are
 * built from the document's own paths and enums, so a new route is checked
 * as soon as it is documented.
 */
describe('real responses of every report route validate against the OpenAPI document', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  const doc = openApiDocument() as Document;
  const check = validatorOf(doc);

  beforeAll(async () => {
    s = await scenarioService();
    const stream = await LocalEventStream.open(localPaths(s.svc.dataDir).stream);
    await stream.put([
      trackedEvent({
        event_id: 'e1',
        site: SITE,
        hostname: SITE,
        visitor_id: 'erin-0000001',
        ts: Date.parse('2026-03-14T10:00:00Z'),
        path: '/',
        country: null,
      }),
    ]);
    await stream.close();
    await s.svc.sessionize();
  });
  afterAll(async () => s?.svc.cleanup());

  /** Every URL of a route: each value of each enum path parameter, each visitor, and query values that exercise the route's options. */
  function urls(path: string, op: Operation): string[] {
    let paths = [path.replace('{domain}', SITE)];
    for (const p of op.parameters ?? []) {
      if (p.in !== 'path' || p.name === 'domain') continue;
      // A pattern's values (`prop:<key>`, a custom property's breakdown): one key, and a hostile one.
      const patterned = (p.schema.anyOf ?? []).some((a) => a.pattern?.startsWith('^prop:'))
        ? ['prop:plan', 'prop:__proto__']
        : [];
      const enumerated = p.schema.enum ?? (p.schema.anyOf ?? []).flatMap((a) => a.enum ?? []);
      const values = p.name === 'visitor_id' ? VISITORS : [...enumerated, ...patterned];
      expect(values.length, `${path}: values for {${p.name}}`).toBeGreaterThan(0);
      paths = paths.flatMap((x) => values.map((v) => x.replace(`{${p.name}}`, encodeURIComponent(v))));
    }
    const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    const variants = [new URLSearchParams()];
    if (query.includes('from')) variants[0] = new URLSearchParams(MARCH);
    if (query.includes('filter'))
      variants.push(
        ...(op.parameters!.find((p) => p.name === 'filter')!.schema.enum ?? []).map(
          (f) => new URLSearchParams({ ...MARCH, filter: f }),
        ),
      );
    if (query.includes('interval'))
      variants.push(
        ...['hour', 'day', 'month'].map(
          (i) => new URLSearchParams({ from: '2026-03-25', to: '2026-03-31', interval: i }),
        ),
      );
    if (query.includes('goal')) variants.push(new URLSearchParams({ ...MARCH, goal: 'Outbound Link: Click' }));
    return paths.flatMap((p) => variants.map((q) => (q.size ? `${p}?${q}` : p)));
  }

  it('every 200 matches its schema, and the nullable fields are null in some of them', async () => {
    const seen: string[] = [];
    let bodies = '';
    for (const [path, { get: op }] of Object.entries(doc.paths)) {
      const ref = op.responses['200']!.content!['application/json'].schema.$ref;
      for (const url of urls(path, op)) {
        const res = await s.get(url);
        const body = (await res.json()) as unknown;
        expect(res.status, url).toBe(200);
        expect(check(ref, body), url).toBeNull();
        seen.push(url);
        bodies += JSON.stringify(body);
      }
    }
    expect(seen.length).toBeGreaterThan(20);
    // The responses checked do hold the nulls the issue is about.
    for (const field of ['visitor_id', 'visitor', 'touch', 'first_touch', 'country'])
      expect(bodies, field).toContain(`"${field}":null`);
  });

  it('errors match the Error schema', async () => {
    for (const [url, status] of [
      [`/api/v1/sites/${SITE}/visitors/nobody-00000001`, 404],
      [`/api/v1/sites/nosuch.example/overview`, 404],
      [`/api/v1/sites/${SITE}/overview?range=yesterday`, 400],
      [`/api/v1/sites/${SITE}/breakdown/nope`, 400],
    ] as const) {
      const res = await s.get(url);
      expect(res.status, url).toBe(status);
      expect(check('#/components/schemas/Error', await res.json()), url).toBeNull();
    }
  });

  it('would fail for a field the document calls non-nullable that a response leaves null', async () => {
    const strict = structuredClone(doc);
    const row = (
      strict.components.schemas.Payments as { properties: { rows: { items: { properties: Record<string, unknown> } } } }
    ).properties.rows.items;
    row.properties.visitor_id = { type: 'string' };
    const res = await s.get(`/api/v1/sites/${SITE}/payments?from=${MARCH.from}&to=${MARCH.to}&filter=all`);
    expect(validatorOf(strict)('#/components/schemas/Payments', await res.json())).toMatch(/visitor_id must be string/);
  });
});
