// The spec as the conformance check sees it: its operations, their parameters, bodies and responses.

/** A JSON Schema (2020-12) node; `$ref`s point into the spec document. */
export type Schema = Record<string, unknown>;

/** An OpenAPI document as parsed JSON. */
export type SpecDocument = Record<string, unknown> & { paths?: Record<string, Record<string, unknown>> };

/** One parameter of an operation (path, query or header). */
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

/** One operation of the API, with JSON pointers into the spec for everything Ajv compiles. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  description: string;
  parameters: Parameter[];
  /** The request body, when the operation takes one. */
  body?: { required: boolean; schema: Schema; pointer: string };
  /** Declared statuses ("200", "404", ...) and the pointer to their JSON schema, or null when bodiless. */
  responses: Record<string, string | null>;
  secured: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Follows `$ref`s (local ones only) until a node that is not a reference. */
export function resolve<T = Schema>(document: SpecDocument, node: unknown): T {
  let current = node as Record<string, unknown>;
  for (let hops = 0; typeof current?.$ref === 'string'; hops += 1) {
    if (hops > 50) throw new Error(`reference cycle at ${String(current.$ref)}`);
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported, got ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Record<string, unknown>>((at, key) => at?.[key] as Record<string, unknown>, document);
    if (current === undefined) throw new Error(`unresolvable reference ${ref}`);
  }
  return current as T;
}

/** Merges `allOf` branches of object schemas into one (properties and required lists combined). */
export function mergeAllOf(document: SpecDocument, schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  return ((allOf as Schema[]) ?? [])
    .map((branch) => resolve<Schema>(document, branch))
    .reduce<Schema>(
      (merged, branch) => ({
        ...merged,
        ...branch,
        properties: { ...(merged.properties as object), ...(branch.properties as object) },
        required: [...((merged.required as string[]) ?? []), ...((branch.required as string[]) ?? [])],
      }),
      rest,
    );
}

/** Every operation under `paths` (the `webhooks` section describes requests we send, not serve). */
export function listOperations(document: SpecDocument): Operation[] {
  const operations: Operation[] = [];
  const globalSecurity = (document.security as unknown[] | undefined) ?? [];
  for (const [path, rawItem] of Object.entries(document.paths ?? {})) {
    const item = resolve<Record<string, unknown>>(document, rawItem);
    for (const method of METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (!raw) continue;
      const base = `/paths/${escapePointer(path)}/${method}`;
      const parameters = [...((item.parameters as unknown[]) ?? []), ...((raw.parameters as unknown[]) ?? [])]
        .map((parameter) => resolve<Record<string, unknown>>(document, parameter))
        .filter((parameter) => ['path', 'query', 'header'].includes(parameter.in as string))
        .map((parameter) => ({
          name: parameter.name as string,
          in: parameter.in as Parameter['in'],
          required: parameter.required === true,
          schema: parameter.schema as Schema,
        }));
      const requestBody = raw.requestBody ? resolve<Record<string, unknown>>(document, raw.requestBody) : undefined;
      const bodySchema = (requestBody?.content as Record<string, { schema: Schema }> | undefined)?.['application/json']
        ?.schema;
      const responses: Record<string, string | null> = {};
      for (const [status, rawResponse] of Object.entries((raw.responses as Record<string, unknown>) ?? {})) {
        const response = resolve<Record<string, unknown>>(document, rawResponse);
        const json = (response.content as Record<string, { schema?: Schema }> | undefined)?.['application/json'];
        const pointer =
          typeof (rawResponse as Schema).$ref === 'string'
            ? `${((rawResponse as Schema).$ref as string).slice(1)}/content/application~1json/schema`
            : `${base}/responses/${status}/content/application~1json/schema`;
        responses[status] = json?.schema ? pointer : null;
      }
      const security = (raw.security as unknown[] | undefined) ?? globalSecurity;
      operations.push({
        id: raw.operationId as string,
        method: method.toUpperCase(),
        path,
        description: `${raw.summary ?? ''}\n${raw.description ?? ''}`,
        parameters,
        ...(bodySchema && requestBody
          ? {
              body: {
                required: requestBody.required === true,
                schema: bodySchema,
                pointer:
                  typeof (raw.requestBody as Schema).$ref === 'string'
                    ? `${((raw.requestBody as Schema).$ref as string).slice(1)}/content/application~1json/schema`
                    : `${base}/requestBody/content/application~1json/schema`,
              },
            }
          : {}),
        responses,
        secured: security.some((requirement) => Object.keys(requirement as object).length > 0),
      });
    }
  }
  return operations;
}

/** The operation a request hits, by method and path relative to the API root; literal segments win over templates. */
export function matchOperation(operations: readonly Operation[], method: string, path: string): Operation | undefined {
  const segments = path.split('/');
  const literals = (operation: Operation) => operation.path.split('/').filter((part) => !part.startsWith('{')).length;
  return operations
    .filter((operation) => {
      if (operation.method !== method.toUpperCase()) return false;
      const template = operation.path.split('/');
      return (
        template.length === segments.length &&
        template.every((part, i) => (/^\{.+\}$/.test(part) ? segments[i] !== '' : part === segments[i]))
      );
    })
    .sort((a, b) => literals(b) - literals(a))[0];
}

/** Fills a path template with values, URL-encoding each. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''));
}
