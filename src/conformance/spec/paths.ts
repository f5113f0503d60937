// Path templates of the spec (`/webhooks/{id}/deliveries/{delivery_id}`): their parameters, filling
// them in, and finding the operation a concrete path belongs to.
import type { Operation } from './operations.js';

/** The names of a path template's parameters in order (`/webhooks/{id}/deliveries/{delivery_id}`: id, delivery_id). */
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

/**
 * The DELETE operation that removes what a POST to `operation` creates (`/webhooks` → `/webhooks/{id}`,
 * `/suppressions` → `/suppressions/{phone_e164}`), with the name of its path parameter: the field of the
 * created item that names it. Undefined when the spec has none.
 */
export function removalOf(
  operations: readonly Operation[],
  operation: Operation,
): { remove: Operation; param: string } | undefined {
  for (const candidate of operations) {
    if (candidate.method !== 'DELETE') continue;
    const [param, ...more] = pathParameterNames(candidate.path);
    if (param !== undefined && more.length === 0 && candidate.path === `${operation.path}/{${param}}`)
      return { remove: candidate, param };
  }
  return undefined;
}
