// Typed reads of the JSON a test receives, so a test states the shape it expects once, where it reads it.
import type { components } from '../../generated/openapi.js';

/** The spec's named schemas: the types of the API's response bodies (the test app validates each one). */
export type Schemas = components['schemas'];

/** Parses `text` as JSON of the type the test declares for it (`unknown` when it declares none). */
export function parseJson<T = unknown>(text: string): T {
  return JSON.parse(text) as T;
}

/** Reads `response`'s body as JSON of the type the test declares for it (`unknown` when it declares none). */
export async function jsonBody<T = unknown>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** The body of every error answer: `{ error: { code, message, param?, details? } }`. */
export type ErrorResponse = Schemas['ErrorResponse'];
