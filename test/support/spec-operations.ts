// The API's operations as the published spec (generated/openapi.json) declares them, for tests that
// derive their cases from the spec: a new operation is covered by them without a new test.
import { readFileSync } from 'node:fs';

/** A node of the spec document (parsed JSON). */
export type SpecNode = Record<string, any>;

const document = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as SpecNode;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** One parameter of an operation. */
export interface SpecParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: SpecNode;
}

/** One operation of the API. */
export interface SpecOperation {
  id: string;
  method: string;
  path: string;
  parameters: SpecParameter[];
  /** The request body's schema (references resolved at the top), or null when the operation takes none. */
  bodySchema: SpecNode | null;
  /** The first example of the request body the spec gives, when it gives one. */
  bodyExample: unknown;
  /** Every example of the request body the spec gives. */
  bodyExamples: unknown[];
  /** Whether the success answer is a page of items (`data` is an array). */
  isList: boolean;
}

/** Follows local `$ref`s until a node that is not a reference. */
export function deref(node: unknown): SpecNode {
  let current = node as SpecNode;
  for (let hops = 0; typeof current?.$ref === 'string'; hops += 1) {
    if (hops > 20) throw new Error(`reference cycle at ${current.$ref}`);
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<SpecNode>((at, key) => at[key], document);
  }
  return current;
}

function successSchema(operation: SpecNode): SpecNode | null {
  const status = Object.keys(operation.responses ?? {}).find((code) => code.startsWith('2'));
  const content = status ? deref(operation.responses[status]).content : undefined;
  return content?.['application/json'] ? deref(content['application/json'].schema) : null;
}

/** Every operation of the spec's paths, in document order. */
export function specOperations(): SpecOperation[] {
  const operations: SpecOperation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, SpecNode>)) {
    for (const method of METHODS) {
      const operation = item[method] as SpecNode | undefined;
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((parameter: unknown) => {
        const resolved = deref(parameter);
        return {
          name: resolved.name,
          in: resolved.in,
          required: Boolean(resolved.required),
          schema: deref(resolved.schema),
        };
      });
      const json = operation.requestBody ? deref(operation.requestBody).content?.['application/json'] : undefined;
      const examples = [
        ...(json?.example !== undefined ? [json.example] : []),
        ...Object.values((json?.examples ?? {}) as Record<string, SpecNode>).map((example) => deref(example).value),
      ];
      const data = successSchema(operation)?.properties?.data;
      operations.push({
        id: operation.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        bodySchema: json ? deref(json.schema) : null,
        bodyExample: examples[0],
        bodyExamples: examples,
        isList: data !== undefined && deref(data).type === 'array',
      });
    }
  }
  return operations;
}

/** The names of a path template's parameters, in order (`/webhooks/{id}/deliveries/{delivery_id}` → id, delivery_id). */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
}

/** The path template up to and including `{name}`: what a path parameter refers to. */
export function pathPrefix(path: string, name: string): string {
  return path.slice(0, path.indexOf(`{${name}}`) + name.length + 2);
}

/** The template with each `{name}` replaced by its URL-encoded value; throws when one is missing. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(value);
  });
}
