// The cases for one operation: generated valid requests, and invalid ones that each break one constraint.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { arbitraryFor } from './arbitrary.js';
import type { Expectation, SchemaJudge } from './judge.js';
import type { RequestInput } from './request.js';
import { withBadValue, withExampleMembers } from './spec/bad-bodies.js';
import { badParameterValues, badValues, UNKNOWN_FIELD } from './spec/bad-values.js';
import type { SpecDocument } from './spec/document.js';
import type { Operation } from './spec/operations.js';

/** An invalid request and the error it must get. */
export interface InvalidCase {
  label: string;
  input: RequestInput;
  expectation: Expectation;
}

const invalid = (param?: string): Expectation => ({
  kind: 'error',
  status: 400,
  code: 'invalid_request',
  ...(param !== undefined ? { param } : {}),
});
const unauthorized: Expectation = { kind: 'error', status: 401, code: 'unauthorized' };

/** `count` valid requests (path values left empty) drawn from the schemas with `seed`. */
export function validInputs(
  document: SpecDocument,
  operation: Operation,
  judge: SchemaJudge,
  seed: number,
  count: number,
): RequestInput[] {
  const optional = <T>(arbitrary: fc.Arbitrary<T>, required: boolean) =>
    required ? arbitrary : fc.option(arbitrary, { nil: undefined });
  const group = (location: 'query' | 'header') =>
    fc.record(
      Object.fromEntries(
        operation.parameters
          .filter((parameter) => parameter.in === location)
          .map((parameter) => [parameter.name, optional(arbitraryFor(document, parameter.schema), parameter.required)]),
      ),
    );
  const body = operation.body
    ? arbitraryFor(document, operation.body.schema).filter((value) => judge.validator(operation.body!.pointer)(value))
    : fc.constant(undefined);
  const strip = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
  const input = fc
    .record({ query: group('query'), headers: group('header'), body })
    .map(({ query, headers, body: value }): RequestInput => ({
      path: {},
      query: strip(query),
      headers: strip(headers) as Record<string, string>,
      ...(value !== undefined ? { body: value } : {}),
    }));
  return fc.sample(input, { seed, numRuns: count });
}

/**
 * An id of the same shape as `id` that names nothing: its `prefix_` (or a phone number's `+` and first
 * digit, which may not be 0) kept, every digit and letter after it zeroed.
 */
function unknownId(id: string): string {
  const [, prefix = '', rest = ''] = /^([a-z]+_|\+[1-9])?(.*)$/s.exec(id) ?? [];
  return prefix + rest.replace(/[0-9A-Za-z]/g, '0');
}

/**
 * The invalid cases for an operation, each built from one of the valid `bases` (taken in turn). When the
 * bases' path values are made up (`pathExists` false), only the first path parameter gets a "no such
 * resource" case: for a later one, the spec does not say which of two unknown ids the 404 names.
 */
export function invalidCases(
  document: SpecDocument,
  operation: Operation,
  judge: SchemaJudge,
  bases: RequestInput[],
  pathExists = true,
): InvalidCase[] {
  const firstPathParameter = operation.parameters.find((parameter) => parameter.in === 'path');
  const found: InvalidCase[] = [];
  let turn = 0;
  const base = () => bases[turn++ % bases.length]!;
  const add = (label: string, change: (input: RequestInput) => RequestInput, expectation: Expectation) => {
    found.push({ label, input: change(base()), expectation });
  };

  if (operation.secured) {
    add('no Authorization header', (input) => ({ ...input, authorization: null }), unauthorized);
    add('not a Bearer token', (input) => ({ ...input, authorization: 'Basic dXNlcjpwYXNz' }), unauthorized);
    add('malformed API key', (input) => ({ ...input, authorization: 'Bearer svc_live_short' }), unauthorized);
    add(
      'unknown API key',
      (input) => ({ ...input, authorization: `Bearer svc_live_zzzzzzzz_${randomUUID().replace(/-/g, '')}` }),
      unauthorized,
    );
  }
  for (const parameter of operation.parameters) {
    const where = parameter.in;
    const put =
      (value: unknown) =>
      (input: RequestInput): RequestInput =>
        where === 'path'
          ? { ...input, path: { ...input.path, [parameter.name]: String(value) } }
          : where === 'query'
            ? { ...input, query: { ...input.query, [parameter.name]: value } }
            : { ...input, headers: { ...input.headers, [parameter.name]: String(value) } };
    for (const bad of badParameterValues(document, parameter.schema)) {
      add(`${where} ${parameter.name}: ${bad.label}`, put(bad.text), invalid(parameter.name));
    }
    if (where === 'path' && (pathExists || parameter === firstPathParameter)) {
      const unknown = (input: RequestInput) => put(unknownId(input.path[parameter.name] ?? randomUUID()))(input);
      add(`path ${parameter.name}: no such resource`, unknown, {
        kind: 'error',
        status: 404,
        code: 'not_found',
        param: parameter.name,
      });
    }
    if (where === 'query' && parameter.schema.format === 'uuid' && parameter.name.endsWith('_id')) {
      // A filter by a resource's id (the cursors are not named so): one that names nothing is not_found.
      add(`query ${parameter.name}: no such resource`, put(unknownId(randomUUID())), {
        kind: 'error',
        status: 404,
        code: 'not_found',
        param: parameter.name,
      });
    }
    if (where === 'query') add(`query ${parameter.name}: given twice`, put(['1', '1']), invalid(parameter.name));
  }
  if (operation.parameters.some((parameter) => parameter.in === 'query')) {
    add(
      'unknown query parameter',
      (input) => ({ ...input, query: { ...input.query, [UNKNOWN_FIELD]: '1' } }),
      invalid(UNKNOWN_FIELD),
    );
  }
  if (!operation.body) {
    // fetch cannot send a body with GET; clients generated from the spec cannot either.
    if (operation.method !== 'GET')
      add('a body on an operation that takes none', (input) => ({ ...input, body: {} }), invalid('body'));
    return found;
  }
  if (operation.body.required) add('no body', (input) => ({ ...input, body: undefined }), invalid('body'));
  add('malformed JSON', (input) => ({ ...input, rawBody: '{"unterminated": ' }), invalid('body'));
  add(
    'body not sent as JSON',
    (input) => ({ ...input, rawBody: 'a=1', contentType: 'text/plain' }),
    invalid('Content-Type'),
  );
  const validate = judge.validator(operation.body.pointer);
  const sample = base();
  for (const bad of badValues(
    document,
    operation.body.schema,
    withExampleMembers(sample.body, operation.body.examples),
  )) {
    const rawBody = withBadValue(sample.body, bad);
    const body: unknown = JSON.parse(rawBody);
    if (!bad.prose && validate(body)) continue; // the change did not break the schema after all (a oneOf branch took it)
    const path = [...bad.at, ...(bad.below ?? [])];
    found.push({
      label: `body ${path.join('.') || '(root)'}: ${bad.label}`,
      // Sent as written: some values (1e400, 2^53+1) change when parsed and serialised again.
      input: { ...sample, body, rawBody },
      expectation: invalid(path.length > 0 ? path.join('.') : 'body'),
    });
  }
  return found;
}
