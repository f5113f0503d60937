// The operations a spec declares under `paths` (its `webhooks` section describes requests the API sends,
// not serves), with their parameters, request body and responses, in document order.
import { resolve, type Schema, type SpecDocument } from './document.js';

/** One parameter of an operation (path, query or header), its schema's top-level reference resolved. */
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

/** The JSON request body of an operation. */
export interface RequestBody {
  required: boolean;
  /** Its schema, the top-level reference resolved. */
  schema: Schema;
  /** A JSON pointer to the schema inside the spec (for Ajv). */
  pointer: string;
  /** Every example the spec gives (`example` first, then each of `examples`). */
  examples: unknown[];
}

/** One operation of the API. */
export interface Operation {
  id: string;
  /** Upper case: GET, POST... */
  method: string;
  path: string;
  /** Its summary and description. */
  description: string;
  parameters: Parameter[];
  /** Absent when the operation takes no JSON body. */
  body?: RequestBody;
  /** Each declared status ("200", "404"...) and a JSON pointer to its body's schema, or null when bodiless. */
  responses: Record<string, string | null>;
  /** Whether a security requirement applies (its own or the document's). */
  secured: boolean;
  /** Whether its success answer is a page of items (`data` is an array). */
  isList: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The pointer to the JSON schema of a request body or response, at `base` unless `raw` is a reference. */
function schemaPointer(raw: Schema, base: string): string {
  return `${typeof raw.$ref === 'string' ? raw.$ref.slice(1) : base}/content/application~1json/schema`;
}

function requestBody(document: SpecDocument, raw: Schema | undefined, base: string): RequestBody | undefined {
  if (!raw) return undefined;
  const resolved = resolve(document, raw);
  const json = resolved.content?.['application/json'];
  if (!json?.schema) return undefined;
  return {
    required: resolved.required === true,
    schema: resolve(document, json.schema),
    pointer: schemaPointer(raw, `${base}/requestBody`),
    examples: [
      ...(json.example !== undefined ? [json.example] : []),
      ...Object.values((json.examples ?? {}) as Record<string, unknown>).map(
        (example) => resolve(document, example).value,
      ),
    ],
  };
}

function isPage(document: SpecDocument, responses: Schema): boolean {
  const status = Object.keys(responses).find((code) => code.startsWith('2'));
  const json = status ? resolve(document, responses[status]).content?.['application/json'] : undefined;
  const data = json ? resolve(document, json.schema).properties?.data : undefined;
  return data !== undefined && resolve(document, data).type === 'array';
}

/** Every operation under the document's `paths`, path by path in document order; throws on a bad reference. */
export function listOperations(document: SpecDocument): Operation[] {
  const operations: Operation[] = [];
  const globalSecurity = (document.security as unknown[] | undefined) ?? [];
  for (const [path, rawItem] of Object.entries((document.paths ?? {}) as Record<string, unknown>)) {
    const item = resolve(document, rawItem);
    for (const method of METHODS) {
      const raw = item[method] as Schema | undefined;
      if (!raw) continue;
      const base = `/paths/${escapePointer(path)}/${method}`;
      const parameters = [...(item.parameters ?? []), ...(raw.parameters ?? [])]
        .map((parameter: unknown) => resolve(document, parameter))
        .filter((parameter) => ['path', 'query', 'header'].includes(parameter.in ?? ''))
        .map((parameter) => ({
          name: parameter.name as string,
          in: parameter.in as Parameter['in'],
          required: parameter.required === true,
          schema: resolve(document, parameter.schema),
        }));
      const responses: Record<string, string | null> = {};
      for (const [status, rawResponse] of Object.entries(raw.responses ?? {})) {
        const json = resolve(document, rawResponse).content?.['application/json'];
        responses[status] = json?.schema ? schemaPointer(rawResponse, `${base}/responses/${status}`) : null;
      }
      const body = requestBody(document, raw.requestBody, base);
      if (!raw.operationId) throw new Error(`${base} has no operationId`);
      const security = (raw.security as unknown[] | undefined) ?? globalSecurity;
      operations.push({
        id: raw.operationId,
        method: method.toUpperCase(),
        path,
        description: `${raw.summary ?? ''}\n${raw.description ?? ''}`,
        parameters,
        ...(body ? { body } : {}),
        responses,
        secured: security.some((requirement) => Object.keys(requirement as object).length > 0),
        isList: isPage(document, raw.responses ?? {}),
      });
    }
  }
  return operations;
}
