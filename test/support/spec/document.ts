// The spec as parsed JSON and the two ways into it every walker needs: following local `$ref`s and
// merging `allOf` branches.

/** A node of the spec (a JSON Schema 2020-12 node, a parameter, a response...), as parsed JSON. */
export type Schema = Record<string, any>;

/** An OpenAPI 3.1 document, as parsed JSON. */
export type SpecDocument = Record<string, any>;

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
      .reduce<Schema>((at, key) => at?.[key], document);
    if (current === undefined) throw new Error(`unresolvable reference ${ref}`);
  }
  return current as T;
}

/** Merges the `allOf` branches of object schemas into one (properties and required lists joined); throws as resolve. */
export function mergeAllOf(document: SpecDocument, schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  return ((allOf as Schema[] | undefined) ?? [])
    .map((branch) => resolve(document, branch))
    .reduce<Schema>(
      (merged, branch) => ({
        ...merged,
        ...branch,
        properties: { ...merged.properties, ...branch.properties },
        required: [...(merged.required ?? []), ...(branch.required ?? [])],
      }),
      rest,
    );
}
