import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NAMED_EXPORTS_AND_ZOD = [
  { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
  // `import { z }` defeats tree-shaking and puts all of zod's locales (450 KB) in every Lambda bundle.
  {
    selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
    message: "Use import * as z from 'zod'.",
  },
];

/**
 * Outside text is never a key into a plain object (`docs/security.md`): a
 * `Record<string, …>` started as `{}` or read from JSON inherits
 * `Object.prototype`, so `constructor` reads a function and `__proto__`
 * writes the prototype. The guard catches the two forms a type annotation
 * shows; reads (`obj[key]`) need type information, so
 * `test/security/prototype-names.test.ts` is their guard.
 */
const STRING_RECORD = "[typeName.name='Record'][typeArguments.params.0.type='TSStringKeyword']";
const OUTSIDE_TEXT_KEYS = [
  {
    selector: `VariableDeclarator[init.type='ObjectExpression'][init.properties.length=0] > Identifier > TSTypeAnnotation > TSTypeReference${STRING_RECORD}`,
    message: 'A Record<string, …> keyed by outside text starts as dict() (lambdas/domain/dict.ts) or is a Map.',
  },
  {
    selector: `TSAsExpression[expression.callee.object.name='JSON'][expression.callee.property.name='parse'] > TSTypeReference${STRING_RECORD}`,
    message: 'A JSON map is read with parseDict() (lambdas/domain/dict.ts): JSON.parse gives it a prototype.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'cdk.out/**',
      '.data/**',
      'tracker/dist/**',
      'app/dist/**',
      'bench/results/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', ...NAMED_EXPORTS_AND_ZOD],
    },
  },
  {
    files: ['lambdas/**/*.ts', 'local/**/*.ts', 'cli/**/*.ts', 'app/src/**/*.{ts,tsx}'],
    rules: { 'no-restricted-syntax': ['error', ...NAMED_EXPORTS_AND_ZOD, ...OUTSIDE_TEXT_KEYS] },
  },
  {
    files: ['eslint.config.js', 'vitest*.config.ts', 'app/vite.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
