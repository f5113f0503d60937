// Requests that each break one rule of an operation as the spec declares it: authentication, query and
// path parameters, headers, and the body (syntax, content type, size, nesting, each field by its schema).
import type { ErrorCode } from '../../src/errors.js';
import { withBadValue, withExampleMembers } from '../../src/conformance/spec/bad-bodies.js';
import { badParameterValues, badValues } from '../../src/conformance/spec/bad-values.js';
import { fullWidth, nested, SQL_INJECTION } from '../../src/conformance/spec/hostile-input.js';
import type { Operation } from '../../src/conformance/spec/operations.js';
import { fillPath, pathParameterNames } from '../../src/conformance/spec/paths.js';
import { publishedSpec } from './spec/published.js';

/** One bad request and the error code it must get. */
export interface BadRequest {
  label: string;
  method: string;
  /** Path and query under /api/v1. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  code: ErrorCode;
}

/** A valid request of an operation, which each bad request changes in one way. */
export interface ValidRequest {
  operation: Operation;
  /** The path parameters' values (the caller's own ids). */
  pathValues: Record<string, string>;
  key: string;
  body?: Record<string, unknown>;
}

function build(valid: ValidRequest, label: string, change: Partial<Omit<BadRequest, 'label'>>): BadRequest {
  const body = change.body ?? (valid.body ? JSON.stringify(valid.body) : undefined);
  return {
    label: `${valid.operation.id}: ${label}`,
    method: valid.operation.method,
    path: change.path ?? fillPath(valid.operation.path, valid.pathValues),
    headers: change.headers ?? {
      Authorization: `Bearer ${valid.key}`,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body } : {}),
    code: change.code ?? 'invalid_request',
  };
}

function authentication(valid: ValidRequest): BadRequest[] {
  const [prefix] = /^svc_live_[a-z0-9]{8}_/.exec(valid.key)!;
  const base = build(valid, '', {});
  const withAuthorization = (label: string, authorization: string | null) => {
    const { Authorization: _, ...headers } = base.headers;
    return build(valid, `Authorization ${label}`, {
      headers: authorization === null ? headers : { ...headers, Authorization: authorization },
      code: 'unauthorized',
    });
  };
  return [
    withAuthorization('missing', null),
    withAuthorization('"Bearer" alone', 'Bearer'),
    withAuthorization('with the wrong secret for a real prefix', `Bearer ${prefix}${'A'.repeat(32)}`),
    withAuthorization('with SQL after the key', `Bearer ${valid.key}' OR '1'='1`),
    withAuthorization('as Basic', `Basic ${Buffer.from(`${valid.key}:`).toString('base64')}`),
    withAuthorization('twice', `Bearer ${valid.key}, Bearer ${valid.key}`),
    withAuthorization('of 8,000 characters', `Bearer svc_live_${'a'.repeat(8_000)}`),
    withAuthorization('with Latin-1 characters', `Bearer ${valid.key.slice(0, -1)}é`),
  ];
}

function query(valid: ValidRequest): BadRequest[] {
  const base = fillPath(valid.operation.path, valid.pathValues);
  const at = (label: string, search: string) => build(valid, `query ${label}`, { path: `${base}?${search}` });
  const bad = [
    at('unknown parameter, repeated', 'unknown=1&unknown=2'),
    at('unknown parameter with SQL', `id=${encodeURIComponent(SQL_INJECTION[0]!)}`),
    at('__proto__ parameter', '__proto__[admin]=1'),
  ];
  for (const parameter of valid.operation.parameters.filter((candidate) => candidate.in === 'query')) {
    const schema = parameter.schema;
    const name = parameter.name;
    const first = schema.enum?.[0] ?? schema.default ?? schema.minimum ?? 'x';
    const sample = typeof first === 'string' || typeof first === 'number' ? String(first) : JSON.stringify(first);
    bad.push(
      at(`${name} repeated`, `${name}=${sample}&${name}=${sample}`),
      at(`${name} as an array`, `${name}[]=${sample}`),
      at(`${name} nested 200 brackets deep`, `${name}${'[a]'.repeat(200)}=${sample}`),
      at(`${name} with a NUL`, `${name}=${encodeURIComponent(`${sample}\u0000`)}`),
      at(`${name} with CRLF`, `${name}=${encodeURIComponent(`${sample}\r\nX-Injected: 1`)}`),
      at(`${name} of 10,000 characters`, `${name}=${'9'.repeat(10_000)}`),
      ...SQL_INJECTION.map((value) => at(`${name} = ${value}`, `${name}=${encodeURIComponent(value)}`)),
      ...badParameterValues(publishedSpec, schema).map(({ label, text }) =>
        at(`${name} ${label}`, `${name}=${encodeURIComponent(text)}`),
      ),
    );
    if (schema.type === 'integer') {
      for (const value of ['-1', '1.5', 'abc', '', '9007199254740993', '1e400', '-1e400', `${schema.maximum ?? 0}1`]) {
        bad.push(at(`${name}=${value}`, `${name}=${encodeURIComponent(value)}`));
      }
    }
    if (schema.enum) {
      const first = String(schema.enum[0]);
      for (const value of [first.toUpperCase(), `${first}\u202e`, `${first} `, fullWidth(first)]) {
        bad.push(at(`${name}=${JSON.stringify(value)}`, `${name}=${encodeURIComponent(value)}`));
      }
    }
  }
  return bad;
}

/** An id of the same shape as `id` that names nothing: the nil UUID, `evt_000…` for an event id, `+90…0` for a number. */
function zeroedId(id: string): string {
  const [, prefix = '', rest = ''] = /^([a-z]+_|\+[1-9])?(.*)$/s.exec(id) ?? [];
  return prefix + rest.replace(/[0-9A-Za-z]/g, '0');
}

function pathIds(valid: ValidRequest): BadRequest[] {
  const bad: BadRequest[] = [];
  for (const name of pathParameterNames(valid.operation.path)) {
    const own = valid.pathValues[name]!;
    const parameter = valid.operation.parameters.find(
      (candidate) => candidate.in === 'path' && candidate.name === name,
    );
    if (!parameter) throw new Error(`${valid.operation.id}: {${name}} is not a declared path parameter`);
    const at = (label: string, value: string, code: ErrorCode = 'invalid_request') =>
      build(valid, `path ${name} ${label}`, {
        path: fillPath(valid.operation.path, { ...valid.pathValues, [name]: value }),
        code,
      });
    bad.push(
      at('not a UUID', 'not-a-uuid'),
      at('of 8,000 characters', 'a'.repeat(8_000)),
      at('climbing directories', '../../etc/passwd'),
      at('with a NUL', `${own}\u0000`),
      at('with an RTL override', `${own}\u202e`),
      at('with an emoji', `${own}😀`),
      at('with SQL appended', `${own}' OR '1'='1`),
      ...SQL_INJECTION.map((value) => at(`= ${value}`, value)),
      at('unknown (its own id with every digit and letter zeroed)', zeroedId(own), 'not_found'),
      build(valid, `path ${name} with a malformed percent escape`, {
        path: fillPath(valid.operation.path, { ...valid.pathValues, [name]: 'MALFORMED' }).replace(
          'MALFORMED',
          '%E0%A4%A',
        ),
      }),
      ...badParameterValues(publishedSpec, parameter.schema).map(({ label, text }) => at(label, text)),
    );
  }
  return bad;
}

function idempotencyKey(valid: ValidRequest): BadRequest[] {
  const parameter = valid.operation.parameters.find((candidate) => candidate.name === 'Idempotency-Key');
  if (!parameter) return [];
  const base = build(valid, '', {});
  const at = (label: string, value: string) =>
    build(valid, `Idempotency-Key ${label}`, { headers: { ...base.headers, 'Idempotency-Key': value } });
  return [
    at('empty', ''),
    at('with a space', 'key with space'),
    at('with a tab', 'key\twith-tab'),
    at('with Latin-1 characters', 'clé'),
    at('of 256 characters', 'k'.repeat(256)),
    at('of 8,000 characters', 'k'.repeat(8_000)),
    ...SQL_INJECTION.filter((value) => value.includes(' ')).map((value) => at(`= ${value}`, value)),
    ...badParameterValues(publishedSpec, parameter.schema).map(({ label, text }) => at(label, text)),
  ];
}

function bodySyntax(valid: ValidRequest): BadRequest[] {
  const texts: Array<[string, string]> = [
    ['an unclosed object', '{'],
    ['a missing value', '{"a":}'],
    ['a trailing comma', '{"a":1,}'],
    ['single quotes', "{'a':1}"],
    ['an unclosed array', '[1,2'],
    ['a bare word', 'nul'],
    ['two documents', '{"a":1}{"b":2}'],
    ['trailing garbage', `${JSON.stringify(valid.body)} x`],
    ['a raw NUL byte', `\u0000${JSON.stringify(valid.body)}`],
    ['a raw control character in a string', '{"a":"\u0001"}'],
    ['NaN', '{"a":NaN}'],
    ['a leading zero', '{"a":01}'],
    ['whitespace only', '   '],
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"text"'],
    ['a number', '1'],
    ['nested 32,000 arrays deep', nested(32_000, 'array')],
    ['nested 10,000 objects deep', nested(10_000, 'object')],
  ];
  return texts.map(([label, body]) => build(valid, `body ${label}`, { body }));
}

function contentTypes(valid: ValidRequest): BadRequest[] {
  const body = JSON.stringify(valid.body);
  const auth = { Authorization: `Bearer ${valid.key}` };
  const types = [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonx',
    'text/json',
    'application/json-patch+json',
  ];
  return [
    build(valid, 'body without Content-Type', { headers: auth, body: new TextEncoder().encode(body) }),
    ...types.map((type) => build(valid, `body as ${type}`, { headers: { ...auth, 'Content-Type': type }, body })),
  ];
}

function sizes(valid: ValidRequest): BadRequest[] {
  const padded = (bytes: number) => {
    const text = JSON.stringify({ ...valid.body, padding: '' });
    return `${text.slice(0, -2)}${'x'.repeat(bytes - text.length)}"}`;
  };
  return [
    build(valid, 'body of 64 KiB + 1 byte', { body: padded(64 * 1024 + 1) }),
    build(valid, 'body of 1 MiB', { body: padded(1024 * 1024) }),
    build(valid, 'body of 8 MiB', { body: padded(8 * 1024 * 1024) }),
  ];
}

function fields(valid: ValidRequest): BadRequest[] {
  const body = valid.operation.body!;
  const bad = badValues(publishedSpec, body.schema, withExampleMembers(valid.body, body.examples)).map((value) =>
    build(valid, `${value.at.join('.') || 'body'} ${value.label}`, { body: withBadValue(valid.body, value) }),
  );
  const text = JSON.stringify(valid.body);
  const extra = (label: string, members: string) =>
    build(valid, label, { body: `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${members}}` });
  bad.push(
    extra('a __proto__ field', '"__proto__":{"admin":true}'),
    extra('a constructor.prototype field', '"constructor":{"prototype":{"admin":true}}'),
    extra('a field named with SQL', `${JSON.stringify(SQL_INJECTION[1])}:1`),
    extra('5,000 unknown fields', Array.from({ length: 5_000 }, (_, i) => `"f${i}":0`).join(',')),
  );
  return bad;
}

/** Every bad request derived from the operation's declaration around one valid request of it. */
export function badRequestsFor(valid: ValidRequest): BadRequest[] {
  const bad = [...authentication(valid), ...query(valid), ...pathIds(valid), ...idempotencyKey(valid)];
  if (valid.operation.body) bad.push(...bodySyntax(valid), ...contentTypes(valid), ...sizes(valid), ...fields(valid));
  else bad.push(build(valid, 'a body where none is taken', { body: '{}' }));
  return bad;
}
