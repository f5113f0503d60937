// Checks of a request that its operation's schemas cannot express: before validation, what the
// validators would mishandle (a path escape that does not decode, integers their coercion would
// accept, a scalar given twice); after validation, what the schemas never see. The facts each check
// needs are derived from an operation once, on its first request, and kept.
import type Koa from 'koa';
import type { Operation, ParsedRequest } from 'openapi-backend';
import { findUnstorableValue } from '../contract/text-rules.js';
import { DomainError, invalidField } from '../errors.js';
import { stateOf } from './request-state.js';

/** A query parameter of the spec (references are resolved when the spec is loaded). */
type QueryParameter = { name: string; schema?: { items?: unknown } };

function queryParametersOf(operation: Operation): QueryParameter[] {
  return (operation.parameters ?? []).flatMap((parameter) =>
    'in' in parameter && parameter.in === 'query' ? [parameter as QueryParameter] : [],
  );
}

const queryNamesOf = perOperation(
  (operation: Operation): ReadonlySet<string> => new Set(queryParametersOf(operation).map(({ name }) => name)),
);

/** A query integer as the API accepts it: decimal digits, with a minus sign for a negative one. */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

/** The query parameters that take one value each (an array parameter may be given several times). */
const singleQueryNamesOf = perOperation((operation: Operation): readonly string[] =>
  queryParametersOf(operation)
    .filter((parameter) => !schemaAllowsType(parameter, 'array'))
    .map((parameter) => parameter.name),
);

/** The query parameters whose values are integers: the parameter itself, or each item of an array. */
const integerQueryNamesOf = perOperation((operation: Operation): readonly string[] =>
  queryParametersOf(operation)
    .filter(
      (parameter) =>
        schemaAllowsType(parameter, 'integer') ||
        (schemaAllowsType(parameter, 'array') && schemaAllowsType({ schema: parameter.schema?.items }, 'integer')),
    )
    .map((parameter) => parameter.name),
);

/** The path parameters of an operation's template, by the index of their segment. */
const pathParametersOf = perOperation((operation: Operation): ReadonlyArray<[number, string]> =>
  operation.path
    .split('/')
    .flatMap((segment, index): Array<[number, string]> =>
      segment.startsWith('{') && segment.endsWith('}') ? [[index, segment.slice(1, -1)]] : [],
    ),
);

/** Whether `text` is valid percent-encoded text (decodeURIComponent takes it). */
export function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** Each path parameter of `operation` with its raw segment of `path`, which the operation's route matched. */
function pathSegments(operation: Operation, path: string): Array<[string, string]> {
  // The route matched the path exactly: its last segments are the template's, after the API root.
  const segments = path.split('/');
  const offset = segments.length - operation.path.split('/').length;
  return pathParametersOf(operation).map(([index, name]) => [name, segments[index + offset] ?? '']);
}

/**
 * The first path parameter of `operation` whose segment of `path` is not valid percent-encoded text
 * (decodeURIComponent refuses it, and the route leaves it undecoded), or null.
 */
export function malformedPathParameter(operation: Operation, path: string): string | null {
  return pathSegments(operation, path).find(([, segment]) => !decodes(segment))?.[0] ?? null;
}

/** The operation's path parameters in `path` (which its route matched), decoded where they decode, by name. */
export function pathValues(operation: Operation, path: string): Record<string, string> {
  return Object.fromEntries(
    pathSegments(operation, path).map(([name, segment]) => [
      name,
      decodes(segment) ? decodeURIComponent(segment) : segment,
    ]),
  );
}

/**
 * Before validation: throws invalid_request naming the first query parameter of the operation that is
 * given more than once (each takes one value, unless it is an array), or the first integer one (or
 * array of integers) with a value that is anything but plain decimal digits (schema validation coerces strings such as `0x10`, `1e1`, `+5`, `5.0` or ` 5`
 * to numbers).
 */
export function checkQueryValues(operation: Operation, querystring: string): void {
  if (querystring === '') return;
  const query = new URLSearchParams(querystring);
  for (const name of singleQueryNamesOf(operation)) {
    if (query.getAll(name).length > 1) throw invalidField(name, 'is given more than once; give it once');
  }
  for (const name of integerQueryNamesOf(operation)) {
    for (const value of query.getAll(name)) {
      if (!DECIMAL_INTEGER.test(value)) throw invalidField(name, 'must be an integer written in decimal digits');
    }
  }
}

/**
 * The first query parameter name in `querystring` (brackets stripped) that `declared` does not hold.
 * The query parser silently drops names such as `constructor` or `__proto__`, so schema validation
 * never sees them.
 */
function undeclaredQueryParameter(querystring: string, declared: ReadonlySet<string>): string | null {
  for (const name of new URLSearchParams(querystring).keys()) {
    const base = name.replace(/\[.*$/s, '');
    if (!declared.has(base)) return base;
  }
  return null;
}

/**
 * After schema validation, on the request as it was parsed and coerced for validation. Throws invalid_request for a body sent
 * to an operation that takes none, a query parameter the operation does not declare (names such as
 * `__proto__` never reach the schemas), and text or numbers the database cannot store as sent (U+0000,
 * lone surrogates, 1e400).
 */
export function checkRequest(operation: Operation, request: ParsedRequest, ctx: Koa.Context): void {
  const state = stateOf(ctx);
  if (!operation.requestBody && state.hasBody) {
    throw new DomainError('invalid_request', 'body: this operation takes no request body', {
      param: 'body',
      details: { body: ['this operation takes no request body'] },
    });
  }
  const undeclared = undeclaredQueryParameter(ctx.querystring, queryNamesOf(operation));
  if (undeclared !== null) throw invalidField(undeclared, 'is not a recognised field');
  const unstorable = state.hasBody ? findUnstorableValue(request.requestBody) : null;
  if (unstorable) throw invalidField(unstorable.path, unstorable.problem);
}

/** Whether a parameter's schema admits values of JSON Schema `type` (alone or in a list of types). */
export function schemaAllowsType(parameter: { schema?: unknown }, type: string): boolean {
  const declared = (parameter.schema as { type?: unknown } | undefined)?.type;
  return declared === type || (Array.isArray(declared) && declared.includes(type));
}

/**
 * Memoises `derive` per operation object: the one apiRoutes asked openapi-backend for at start and
 * hands to every request of that app (openapi-backend builds a new copy each time one is asked for,
 * so an app must keep its own). Two apps over different documents in one process (tests serving a
 * variant of the spec) thus never share what was derived. Callers must treat what it returns as
 * read-only.
 */
export function perOperation<T>(derive: (operation: Operation) => T): (operation: Operation) => T {
  const derived = new WeakMap<Operation, T>();
  return (operation) => {
    let value = derived.get(operation);
    if (value === undefined) {
      value = derive(operation);
      derived.set(operation, value);
    }
    return value;
  };
}
