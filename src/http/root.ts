// GET /: where to go from the server's root (the reference page, the contract, the API), outside the
// API contract and without authentication. Links are paths on this server, so they hold behind any proxy.
import type Router from '@koa/router';
import { API_ROOT } from './api-routes.js';
import { PUBLISHED } from './docs.js';

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
