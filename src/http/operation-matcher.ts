// Routing by path template with patterns compiled once. openapi-backend's own matcher builds and
// compiles a regular expression for every operation on every request (about a twentieth of the CPU
// of a cheap request); this one gives the same answers from patterns made at start-up.
import type { OpenAPIRouter, Operation, Request } from 'openapi-backend';

function templatePattern(template: string): RegExp {
  const literal = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}$`);
}

/**
 * Replaces `router.matchOperation` with one that uses precompiled patterns and the same rules: an exact
 * path with the request's method first, then templates, most literal characters first. Like the
 * original, in strict mode it throws `404-notFound…` when no path matches and `405-methodNotAllowed…`
 * when the path matches but the method does not; otherwise it returns undefined for both.
 */
export function installCompiledMatcher(router: OpenAPIRouter): void {
  const operations = router.getOperations();
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
