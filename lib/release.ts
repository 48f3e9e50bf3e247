import { readFileSync } from 'node:fs';

/**
 * This release's version (package.json's `version`): `footfall --version`, the
 * stack's `Version` output, and what `footfall upgrade check` compares with
 * the deployed stack's (`docs/deploy.md`, "Upgrading").
 */
export const RELEASE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
