// The spec as parsed JSON and the two ways into it every walker needs: following local `$ref`s and
// merging `allOf` branches.

/**
 * A node of the spec (a JSON Schema 2020-12 node, a parameter, a response...), as parsed JSON: the
 * keywords the walkers read, typed, and any other keyword as unknown.
 */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  properties?: Record<string, Schema>;
  /** A schema's required properties, or whether a parameter or header is required. */
  required?: string[] | boolean;
  items?: Schema;
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  // OpenAPI's own fields: operations, parameters, bodies, responses and media types.
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Schema[];
  requestBody?: Schema;
  responses?: Record<string, Schema>;
  name?: string;
  in?: string;
  schema?: Schema;
  content?: Record<string, Schema>;
  headers?: Record<string, Schema>;
  [keyword: string]: unknown;
}

/** An OpenAPI 3.1 document, as parsed JSON: the parts the walkers read, and anything else as unknown. */
export interface SpecDocument {
  paths?: Record<string, Record<string, Schema>>;
  webhooks?: Record<string, Record<string, Schema>>;
  components?: { schemas?: Record<string, Schema>; [section: string]: unknown };
  info?: { description?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** Follows local `$ref`s until a node that is not a reference; throws on a remote, unresolvable or cyclic one. */
export function resolve<T = Schema>(document: SpecDocument, node: unknown): T {
  let current = node as Schema;
  for (let hops = 0; typeof current?.$ref === 'string'; hops += 1) {
    if (hops > 50) throw new Error(`reference cycle at ${current.$ref}`);
    const ref = current.$ref;
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported, got ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], document) as Schema;
    if (current === undefined) throw new Error(`unresolvable reference ${ref}`);
  }
  return current as T;
}

/** The properties an object schema requires. */
function requiredOf(schema: Schema): string[] {
  return Array.isArray(schema.required) ? schema.required : [];
}

/** Merges the `allOf` branches of object schemas into one (properties and required lists joined); throws as resolve. */
export function mergeAllOf(document: SpecDocument, schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  return (allOf ?? [])
    .map((branch) => resolve(document, branch))
    .reduce<Schema>(
      (merged, branch) => ({
        ...merged,
        ...branch,
        properties: { ...merged.properties, ...branch.properties },
        required: [...requiredOf(merged), ...requiredOf(branch)],
      }),
      rest,
    );
}
