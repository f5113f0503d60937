// openapi-backend, configured through its documented options: it loads the spec and gives each
// operation (global security included) to the API's routes, and validates requests with the spec's Ajv
// set-up (responses too, in tests). Only its documented API is used (docs/architecture.md lists it).
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { createSpecAjv } from '../contract/ajv.js';
import { projectFile } from '../project-files.js';
import type { ApiKeyAuthenticator } from '../orgs/authenticator.js';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';

export const API_ROOT = '/api/v1';

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/** What admits a request to an operation: the key authenticator, the per-org limiter and the metrics they count in. */
export interface ApiGuards {
  authenticator: ApiKeyAuthenticator;
  limiter: RateLimiter;
  metrics: Metrics;
}

/**
 * Builds and initialises openapi-backend over `document` (the published spec unless a test serves a
 * variant). `quick` skips its check of the document against the OpenAPI 3.0 schema (which refuses
 * valid 3.1; the spec is linted by 3.1-aware tools instead) and compiles each operation's validators
 * on its first request. Query and path parameters are coerced to their schema types as they are
 * validated. Throws at start if the spec cannot be loaded.
 */
export async function createBackend(document: Document = apiDocument): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: false,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options) as never,
  });
  await api.init();
  return api;
}
