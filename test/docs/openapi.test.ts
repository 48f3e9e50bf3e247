import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../../lambdas/handlers/openapi.js';

describe('docs/openapi.json', () => {
  it('is the document the API serves (regenerate with npm run docs:openapi)', () => {
    const file = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(openApiDocument());
  });
});
