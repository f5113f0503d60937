// The patched router (src/http/openapi-backend-patches.ts) gives exactly the answers of openapi-backend's
// own, for every path template of the spec with every method, plus near misses (unknown paths, trailing
// slashes, other roots), and parses requests as it does: an upgrade that changes openapi-backend's routing
// or parsing fails here.
import { OpenAPIRouter, type Document, type Request } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { API_ROOT, IGNORE_TRAILING_SLASHES, apiDocument } from '../src/http/backend.js';
import { patchRouter } from '../src/http/openapi-backend-patches.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

function answer(router: OpenAPIRouter, method: string, path: string, strict: boolean): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, strict)?.operationId ?? 'undefined';
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

describe('the patched openapi-backend router', () => {
  it('answers like openapi-backend for every template, method and near miss', () => {
    const options = {
      definition: apiDocument as Document,
      apiRoot: API_ROOT,
      ignoreTrailingSlashes: IGNORE_TRAILING_SLASHES,
    };
    const original = new OpenAPIRouter(options);
    const compiled = new OpenAPIRouter(options);
    patchRouter(compiled);
    expect(compiled.getOperations()).toEqual(original.getOperations());
    const templates = Object.keys(apiDocument.paths ?? {});
    const concrete = templates.map((template) =>
      template.replace(/\{[^}]+\}/g, '0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10'),
    );
    const paths = [
      ...concrete.map((path) => `${API_ROOT}${path}`),
      ...concrete.map((path) => `${API_ROOT}${path}/`),
      ...concrete.map((path) => `${API_ROOT}${path}/extra`),
      ...templates.map((template) => `${API_ROOT}${template}`),
      `${API_ROOT}`,
      `${API_ROOT}/`,
      `${API_ROOT}/nope`,
      `${API_ROOT}x/calls`,
      '/calls',
      '/',
    ];
    let compared = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        for (const strict of [true, false]) {
          expect(answer(compiled, method, path, strict), `${method} ${path} strict=${strict}`).toBe(
            answer(original, method, path, strict),
          );
          compared += 1;
        }
      }
    }
    expect(compared).toBeGreaterThan(400);
    // Sanity: the comparison covers real hits, 404s and 405s.
    expect(answer(compiled, 'get', `${API_ROOT}/calls`, true)).toBe('listCalls');
    expect(answer(compiled, 'put', `${API_ROOT}/calls`, true)).toMatch(/^throws 405/);
    expect(answer(compiled, 'get', `${API_ROOT}/nope`, true)).toMatch(/^throws 404/);
  });

  it('parses like openapi-backend for every operation, with and without query, cookies, escapes or a body', () => {
    const options = { definition: apiDocument as Document, apiRoot: API_ROOT };
    const original = new OpenAPIRouter(options);
    const patched = new OpenAPIRouter(options);
    patchRouter(patched);
    const outcome = (run: () => unknown) => {
      try {
        return { parsed: run() };
      } catch (error) {
        return { throws: `${(error as Error).name}: ${(error as Error).message}` };
      }
    };
    let compared = 0;
    for (const operation of patched.getOperations()) {
      const twin = original.getOperation(operation.operationId!)!;
      for (const segment of ['0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10', 'a%20b', '%E0%A4%A', '']) {
        // An object query is what validation hands back after coercing the values.
        const queries: Request['query'][] = [
          '',
          'limit=5&status=queued',
          'a[b]=1&a[c]=2',
          'x=1&x=2',
          { limit: '5', x: ['1', '2'] },
        ];
        for (const query of queries) {
          const headerSets: Request['headers'][] = [
            {},
            { Authorization: 'Bearer k', 'X-Other': ['1', '2'] },
            { cookie: 'a=1' },
          ];
          for (const headers of headerSets) {
            for (const body of [undefined, '{"a":1}', 'not json', { a: 1 }]) {
              const request: Request = {
                method: operation.method.toUpperCase(),
                path: `${API_ROOT}${operation.path.replace(/\{[^}]+\}/g, segment)}`,
                query,
                headers,
                ...(body === undefined ? {} : { body }),
              };
              expect(outcome(() => patched.parseRequest({ ...request }, operation))).toEqual(
                outcome(() => original.parseRequest({ ...request }, twin)),
              );
              expect(outcome(() => patched.parseRequest({ ...request }))).toEqual(
                outcome(() => original.parseRequest({ ...request })),
              );
              compared += 1;
            }
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
