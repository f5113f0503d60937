// dependency-cruiser's rules for this repository (`npm run lint:deps`): no import cycles, and the
// house rules of CONTRIBUTING.md and docs/architecture.md as far as the code keeps them.

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules must not import each other in a ring, not even through type-only imports.',
      from: { path: '^(src|db|scripts|test)/' },
      to: { circular: true },
    },
    {
      name: 'http-only-from-composition',
      severity: 'error',
      comment:
        'src/http/ is the Koa and openapi-backend glue: inside src/ only the composition roots (app.ts builds ' +
        'the middleware chain, cli/serve.ts starts the server) import it. Tests and scripts may.',
      from: { path: '^src/', pathNot: '^src/(http/|app\\.ts$|cli/serve\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'http-not-to-pages',
      severity: 'error',
      comment:
        "src/http/ imports no feature's pages: a rule the HTTP layer needs about a page (such as which forms " +
        "wait on a webhook receiver) lives in its feature's policy.ts.",
      from: { path: '^src/http/' },
      to: { path: '^src/[^/]+/pages/' },
    },
    {
      name: 'handlers-only-from-http',
      severity: 'error',
      comment: "A feature's handlers are reached through the handler map in src/http/ and nowhere else.",
      from: { pathNot: '^src/http/' },
      to: { path: '^src/[^/]+/handlers\\.ts$' },
    },
    {
      name: 'no-foreign-queries',
      severity: 'error',
      comment: "A feature may call another feature's service, never its queries (nor may code outside the features).",
      from: { path: '^src/([^/]+)' },
      to: { path: '^src/[^/]+/.*queries\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'members-own-their-tables',
      severity: 'error',
      comment:
        'Only the members feature writes its tables (dashboard users, links, sessions, sign-in failures, form ' +
        'uses): its queries modules are imported from inside src/members/ alone. The dashboard and the CLI go ' +
        'through its service; tests may reach past it, and migrations never import it.',
      from: { pathNot: '^(src/members/|test/|db/migrations/)' },
      to: { path: '^src/members/.*queries\\.ts$' },
    },
    {
      name: 'queries-stay-sql',
      severity: 'error',
      comment: 'Queries speak SQL: they never reach up to a service, a handler or the HTTP layer.',
      from: { path: 'queries\\.ts$' },
      to: { path: '(^src/http/|/service\\.ts$|/handlers\\.ts$)' },
    },
    {
      name: 'build-not-to-tests-or-scripts',
      severity: 'error',
      comment:
        'The built executable is src/ and db/ alone (scripts/build.ts), and a production install has no test/ ' +
        'or scripts/: nothing in src/ or db/ imports from them (the conformance check lives in src/conformance/).',
      from: { path: '^(src|db)/' },
      to: { path: '^(test|scripts)/' },
    },
    {
      name: 'build-not-to-dev-dependencies',
      severity: 'error',
      comment:
        'A production install prunes devDependencies: src/ and db/ import them for types only (erased by ' +
        'the build); anything they need at run time is in dependencies.',
      from: { path: '^(src|db)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves, so no dependency escapes the rules above unseen.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a ring of types is still a ring in the design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      // Without .cjs here, '../generated/validators.js' finds its types in validators.d.ts rather than
      // stopping at the validators.cjs beside it (which it then rejects as unresolved).
      extensions: ['.ts', '.d.ts', '.js', '.json'],
    },
    cache: false,
  },
};
