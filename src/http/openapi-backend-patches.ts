// The one place where openapi-backend's internals are replaced, for speed; its options cannot do this.
// The router rebuilds its list of operations (with lodash) on every lookup, compiles a regular
// expression per operation on every match and compiles the path template again on every parse; the
// document never changes after init, so all of that is done once here. The test
// test/openapi-backend-patches.test.ts compares the patched router's answers and parses with an
// unpatched one for every operation, and fails when an upgrade changes them.
import type { OpenAPIRouter, Operation, ParsedRequest, Request } from 'openapi-backend';

type PathParams = (path: string) => Record<string, string>;

/**
 * The path parameters of a template, as openapi-backend reads them (through bath): each `{name}` takes
 * one segment, decoded with decodeURIComponent (which throws URIError on a malformed escape); a path
 * that does not fit gives no parameters.
 */
function pathParamsOf(template: string): PathParams {
  const names = [...template.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((match) => match[1]!);
  const pattern = new RegExp(`^${template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
  return (path) => {
    const match = pattern.exec(path);
    const params: Record<string, string> = {};
    if (!match) return params;
    const values = names.map((_, i) => decodeURIComponent(match[i + 1]!));
    // bath refuses a path that gives one name two different values.
    if (names.some((name, i) => names.some((other, j) => other === name && values[j] !== values[i]))) return {};
    names.forEach((name, i) => (params[name] = values[i]!));
    return params;
  };
}

/** Whether openapi-backend reshapes this operation's query values (JSON content, non-exploded lists). */
function reshapesQuery(operation: Operation): boolean {
  return (operation.parameters ?? []).some(
    (parameter) =>
      !('$ref' in parameter) &&
      parameter.in === 'query' &&
      (parameter.content?.['application/json'] !== undefined || parameter.explode === false),
  );
}

/** A deep copy of a parsed query (strings, numbers, booleans, arrays and plain objects), as lodash's cloneDeep makes. */
function copyQuery(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyQuery);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyQuery((value as Record<string, unknown>)[key]);
  return copy;
}

/**
 * openapi-backend's parseRequest for the requests this service hands it (headers without cookies, the
 * query as a string, or as the object validation coerced), with each operation's path template compiled
 * once; anything else goes to `parse`.
 */
function fastParse(
  router: OpenAPIRouter,
  operations: Operation[],
  parse: OpenAPIRouter['parseRequest'],
): OpenAPIRouter['parseRequest'] {
  const cookiePrototype = Object.getPrototypeOf(parse({ method: 'get', path: '/', headers: {} }).cookies) as object;
  const pathParamsByOperation = new Map<Operation, PathParams>();
  for (const operation of operations) {
    if (!reshapesQuery(operation)) pathParamsByOperation.set(operation, pathParamsOf(operation.path));
  }
  return ((req: Request, operation?: Operation): ParsedRequest => {
    const pathParams = operation ? pathParamsByOperation.get(operation) : undefined;
    const headers: Record<string, string | string[]> = {};
    for (const name in req.headers) headers[name.toLowerCase()] = req.headers[name]!;
    const { query: rawQuery } = req;
    if ((operation && !pathParams) || rawQuery === undefined || headers.cookie !== undefined) {
      return parse(req, operation);
    }
    let requestBody = req.body;
    if (req.body && typeof req.body !== 'object') {
      try {
        requestBody = JSON.parse(String(req.body));
      } catch {
        // Left as sent: validation reports it.
      }
    }
    const query =
      typeof rawQuery === 'object' ? copyQuery(rawQuery) : rawQuery === '' ? {} : router.parseRequestQuery(req);
    let path = req.path?.trim() || '';
    if (!path.startsWith('/')) path = `/${path}`;
    path = path.split('?')[0]!;
    return {
      ...req,
      path,
      method: req.method.trim().toLowerCase(),
      params: pathParams ? pathParams(router.normalizePath(path)) : {},
      headers,
      query,
      cookies: Object.create(cookiePrototype) as ParsedRequest['cookies'],
      requestBody,
    };
  }) as OpenAPIRouter['parseRequest'];
}

function templatePattern(template: string): RegExp {
  const literal = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}$`);
}

/**
 * Caches `router.getOperations()` and replaces `router.matchOperation` with one that uses patterns
 * compiled once and the same rules: an exact path with the request's method first, then templates, most
 * literal characters first. Like the original, in strict mode it throws `404-notFound…` when no path
 * matches and `405-methodNotAllowed…` when the path matches but the method does not; otherwise it
 * returns undefined for both. Also replaces `router.parseRequest` with one that parses with each
 * operation's path template compiled once (see fastParse). Call after init().
 */
export function patchRouter(router: OpenAPIRouter): void {
  const operations = router.getOperations();
  router.getOperations = () => operations;
  router.parseRequest = fastParse(router, operations, router.parseRequest.bind(router));

  const byTemplate = operations
    .map((operation) => ({
      operation,
      pattern: templatePattern(operation.path),
      literalLength: operation.path.replace(/\{.*?\}/g, '').length,
    }))
    .sort((a, b) => b.literalLength - a.literalLength);

  const root = router.apiRoot.replace(/\/$/, '');
  const underRoot = (path: string) =>
    root === '' ? path.startsWith('/') : path === root || path.startsWith(`${root}/`);

  router.matchOperation = ((req: Request, strict?: boolean): Operation | undefined => {
    const { path, method } = router.normalizeRequest(req);
    const fail = (message: string) => {
      if (strict) throw new Error(message);
      return undefined;
    };
    if (!underRoot(path)) return fail('404-notFound: no route matches request');
    const relative = router.normalizePath(path);
    const exact = operations.find((operation) => operation.path === relative && operation.method === method);
    if (exact) return exact;
    const matches = byTemplate.filter((route) => route.pattern.test(relative));
    if (matches.length === 0) return fail('404-notFound: no route matches request');
    return (
      matches.find((route) => route.operation.method === method)?.operation ??
      fail('405-methodNotAllowed: this method is not registered for the route')
    );
  }) as OpenAPIRouter['matchOperation'];
}
