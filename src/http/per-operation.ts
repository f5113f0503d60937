// Facts derived from an operation of the spec, worked out on its first request and kept: operations
// never change after start, and the request path should not rebuild them each time.
import type { Operation } from 'openapi-backend';

/** Whether a parameter's schema admits values of JSON Schema `type` (alone or in a list of types). */
export function schemaAllowsType(parameter: { schema?: unknown }, type: string): boolean {
  const declared = (parameter.schema as { type?: unknown } | undefined)?.type;
  return declared === type || (Array.isArray(declared) && declared.includes(type));
}

/**
 * Memoises `derive` per operation, by its method and path (not by object identity: openapi-backend
 * builds a new copy of an operation each time one is asked for). Callers must treat what it returns
 * as read-only.
 */
export function perOperation<T>(derive: (operation: Operation) => T): (operation: Operation) => T {
  const derived = new Map<string, T>();
  return (operation) => {
    const key = `${operation.method} ${operation.path}`;
    let value = derived.get(key);
    if (value === undefined) {
      value = derive(operation);
      derived.set(key, value);
    }
    return value;
  };
}
