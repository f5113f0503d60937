// What the server publishes outside the API, without authentication: the JSON index at its root, the
// contract (JSON and YAML) and the Redoc reference page.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Router from '@koa/router';
import { projectFile } from '../project-files.js';
import { API_ROOT } from './api-routes.js';

/** Where the server publishes its reference page and its contract. */
export const PUBLISHED = {
  docs: '/docs',
  specJson: '/api/v1/openapi.json',
  specYaml: '/api/v1/openapi.yaml',
} as const;

const SPEC_JSON_PATH = projectFile('generated/openapi.json');
const SPEC_YAML_PATH = projectFile('generated/openapi.yaml');

// Everything the page needs comes from this server (the served bundle has no remote logo); the policy
// keeps it that way. Redoc needs inline styles (styled-components), eval (Ajv) and a blob: worker (search).
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Local font stacks only, so the page never asks for a web font.
const REDOC_THEME = JSON.stringify({
  typography: {
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
    code: { fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace' },
  },
});

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; } pre, pre code { white-space: pre-wrap !important; overflow-wrap: anywhere; }</style>
</head>
<body>
<redoc spec-url="${PUBLISHED.specJson}" theme='${REDOC_THEME}'></redoc>
<script src="${PUBLISHED.docs}/redoc.standalone.js"></script>
</body>
</html>
`;

/** Registers GET /api/v1/openapi.json (generated/openapi.json) and GET /api/v1/openapi.yaml (generated/openapi.yaml), both read once here. */
export function specRoutes(router: Router): void {
  const json = readFileSync(SPEC_JSON_PATH);
  const yaml = readFileSync(SPEC_YAML_PATH);
  router.get(PUBLISHED.specJson, (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = json;
  });
  router.get(PUBLISHED.specYaml, (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = yaml;
  });
}

/** Registers GET /docs (the Redoc page) and GET /docs/redoc.standalone.js (Redoc's bundle, read once here). */
export function docsRoutes(router: Router): void {
  const bundle = readRedocBundle();
  router.get(PUBLISHED.docs, (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = DOCS_HTML;
  });
  router.get(`${PUBLISHED.docs}/redoc.standalone.js`, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = bundle;
  });
}

// Redoc's standalone bundle as the docs page serves it: read once from node_modules, with the one
// asset it would fetch from off this server (its footer logo, from Redocly's CDN) taken out.
const REDOC_BUNDLE_PATH = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

// The footer's `<img src="https://cdn.redoc.ly/redoc/logo-mini.svg">`, rendered as `cond ? img : null`.
const REMOTE_LOGO =
  /\w+\?\w+\.createElement\("img",\{alt:"redocly logo",[^}]*src:"https:\/\/cdn\.redoc\.ly\/[^"]*"\}\):null/g;

// The bundle with the remote logo replaced by nothing; throws when this Redoc version draws it differently.
function readRedocBundle(): Buffer {
  const source = readFileSync(REDOC_BUNDLE_PATH, 'utf8');
  const matches = source.match(REMOTE_LOGO)?.length ?? 0;
  if (matches !== 1) throw new Error(`${REDOC_BUNDLE_PATH}: expected Redoc's CDN logo once, found it ${matches} times`);
  return Buffer.from(source.replace(REMOTE_LOGO, 'null'));
}

const INDEX = {
  name: 'voice-call-api',
  docs_url: PUBLISHED.docs,
  openapi_json_url: PUBLISHED.specJson,
  openapi_yaml_url: PUBLISHED.specYaml,
  api_base_url: API_ROOT,
};

// RFC 8631: service-doc for people, service-desc for machines.
const LINK = [
  `<${PUBLISHED.docs}>; rel="service-doc"; type="text/html"`,
  `<${PUBLISHED.specJson}>; rel="service-desc"; type="application/json"`,
  `<${PUBLISHED.specYaml}>; rel="service-desc"; type="application/yaml"`,
].join(', ');

/** Registers GET / (a JSON index of the docs page, the spec in JSON and YAML, and the API base, with a Link header). */
export function rootRoutes(router: Router): void {
  router.get('/', (ctx) => {
    ctx.set('Link', LINK);
    ctx.body = INDEX;
  });
}
