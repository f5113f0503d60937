// The published spec (generated/openapi.json, what the service serves at /api/v1/openapi.json), read once,
// and its operations.
import { readFileSync } from 'node:fs';
import type { SpecDocument } from '../../../src/conformance/spec/document.js';
import { listOperations, type Operation } from '../../../src/conformance/spec/operations.js';

/** The published spec as parsed JSON; reading it throws at load when `npm run gen` never ran. */
export const publishedSpec = JSON.parse(
  readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8'),
) as SpecDocument;

/** Every operation of the published spec, in document order. */
export const publishedOperations: readonly Operation[] = listOperations(publishedSpec);
