// A request as parts (path values, query, headers, body) and its assembly into an HTTP request.
import type { HttpRequest } from './http.js';
import type { Operation } from './spec/operations.js';
import { fillPath } from './spec/paths.js';

/** The parts of a request that cases generate and break. */
export interface RequestInput {
  path: Record<string, string>;
  /** Query values; an array repeats the parameter. */
  query: Record<string, unknown>;
  /** The operation's header parameters. */
  headers: Record<string, string>;
  /** The JSON body; undefined sends none. */
  body?: unknown;
  /** Sent instead of the serialised body (for malformed JSON). */
  rawBody?: string;
  /** Overrides the Content-Type of a body. */
  contentType?: string;
  /** Overrides the Authorization header; null leaves it out. */
  authorization?: string | null;
}

/** Assembles the HTTP request for `input` against the API root `baseUrl`. */
export function buildRequest(baseUrl: string, operation: Operation, input: RequestInput, apiKey: string): HttpRequest {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(input.query)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const query = search.toString();
  const headers: Record<string, string> = { ...input.headers };
  const authorization = input.authorization === undefined ? `Bearer ${apiKey}` : input.authorization;
  if (authorization !== null) headers.Authorization = authorization;
  const body = input.rawBody ?? (input.body === undefined ? undefined : JSON.stringify(input.body));
  if (body !== undefined) headers['Content-Type'] = input.contentType ?? 'application/json';
  return {
    method: operation.method,
    url: `${baseUrl}${fillPath(operation.path, input.path)}${query ? `?${query}` : ''}`,
    headers,
    ...(body !== undefined ? { body } : {}),
  };
}
