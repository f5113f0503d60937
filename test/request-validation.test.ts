// The start-up guard of request validation: the API's spec declares only parameters the pipeline reads
// as openapi-backend would, and a spec that declares another kind stops the service at start.
import type { Operation } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../src/http/backend.js';
import { checkParameterKinds } from '../src/http/request-validation.js';

function operationWith(parameter: Record<string, unknown>): Operation {
  return {
    operationId: 'listThings',
    method: 'get',
    path: '/things',
    responses: {},
    parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }, parameter],
  } as unknown as Operation;
}

describe('request validation at start', () => {
  it("accepts every operation of the API's spec", async () => {
    const api = await createBackend();
    expect(api.getOperations().length).toBeGreaterThan(0);
    expect(() => checkParameterKinds(api.getOperations())).not.toThrow();
  });

  it('accepts scalar query, header and path parameters', () => {
    for (const parameter of [
      { name: 'status', in: 'query', schema: { type: 'string' } },
      { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
      { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
    ]) {
      expect(() => checkParameterKinds([operationWith(parameter)])).not.toThrow();
    }
  });

  it.each([
    ['a cookie parameter', { name: 'session', in: 'cookie', schema: { type: 'string' } }, 'cookie parameter session'],
    ['an array query parameter', { name: 'status', in: 'query', schema: { type: 'array' } }, 'query parameter status'],
    [
      'a query parameter that may be an array',
      { name: 'status', in: 'query', schema: { type: ['array', 'null'] } },
      'query parameter status',
    ],
    [
      'a query parameter with JSON content',
      { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
      'query parameter filter',
    ],
    [
      'a query parameter that is not exploded',
      { name: 'ids', in: 'query', explode: false, schema: { type: 'string' } },
      'query parameter ids',
    ],
  ])('refuses %s, naming the operation and the parameter', (_kind, parameter, named) => {
    expect(() => checkParameterKinds([operationWith(parameter)])).toThrow(`listThings: the ${named} is of a kind`);
  });
});
