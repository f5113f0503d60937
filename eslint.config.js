// ESLint's flat config (`npm run lint`): typescript-eslint's type-aware `recommendedTypeChecked` over src,
// db, scripts and test, plus rules that catch a promise nobody waits for or handles (a floating
// rejection takes the process down), a switch that misses a case of a union, and console calls in src.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    files: ['{src,db,scripts,test}/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // Types come from the tsconfig.json each file belongs to, as `npm run typecheck` sees them.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // Relaxed: `const { id: _id, ...rest } = row` is how code drops a field from a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // The service logs through its logger and the CLI writes to process.stdout and stderr, so a console
    // call in src is a leftover (one once corrupted the CLI's JSON output).
    files: ['src/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    // Landed migrations are never edited; src/database/any-schema.ts is the one other place that names Kysely<any>.
    files: ['db/migrations/**/*.ts', 'src/database/any-schema.ts'],
    rules: {
      // Off: Kysely's migration docs type a migration's handle Kysely<any>, the tables being older than the app's types.
      '@typescript-eslint/no-explicit-any': 'off',
      // Off: the first migration's down() is async with nothing to await, and a landed migration stays as it is.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
