// The one place where openapi-backend's internals are replaced, for speed; its options cannot do this.
// The router rebuilds its list of operations (with lodash) on every lookup and compiles a regular
// expression per operation on every match; the document never changes after init, so both are done
// once here. A request is also parsed for its operation by the backend and then again, unchanged, by
// the validator: the second parse gets the first one's answer. test/openapi-backend-patches.test.ts compares the patched router's answers with an
// unpatched one for every path template and method, and fails when an upgrade changes them.
import type { OpenAPIRouter, Operation, ParsedRequest, Request } from 'openapi-backend';

function templatePattern(template: string): RegExp {
  const literal = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}$`);
}

/**
 * Caches `router.getOperations()` and replaces `router.matchOperation` with one that uses patterns
 * compiled once and the same rules: an exact path with the request's method first, then templates, most
 * literal characters first. Like the original, in strict mode it throws `404-notFound…` when no path
 * matches and `405-methodNotAllowed…` when the path matches but the method does not; otherwise it
 * returns undefined for both. Also makes `router.parseRequest(req, operation)` answer a repeated call
 * for the same request object, operation and body with the object it returned before (the validator
 * coerces that object in place, as it did its own copy). Call after init().
 */
export function patchRouter(router: OpenAPIRouter): void {
  const parse = router.parseRequest.bind(router);
  const parsed = new WeakMap<Request, { operation: Operation; body: unknown; result: ParsedRequest }>();
  router.parseRequest = ((req: Request, operation?: Operation): ParsedRequest => {
    if (!operation) return parse(req);
    const last = parsed.get(req);
    if (last && last.operation === operation && last.body === req.body) return last.result;
    const result = parse(req, operation);
    parsed.set(req, { operation, body: req.body, result });
    return result;
  }) as OpenAPIRouter['parseRequest'];

  const operations = router.getOperations();
  router.getOperations = () => operations;
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
