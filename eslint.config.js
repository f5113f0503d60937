// ESLint's flat config (`npm run lint`): type-aware rules over src, db, scripts and test. The two rules
// below catch a promise nobody waits for or handles; a floating rejection takes the process down.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig({
  files: ['{src,db,scripts,test}/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    // Types come from the tsconfig.json each file belongs to, as `npm run typecheck` sees them.
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
  },
});
