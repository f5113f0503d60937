// Turns Ajv errors from request validation into the invalid_request envelope with param and details.
import type { ErrorObject } from 'ajv';
import { DomainError } from '../errors.js';

const LOCATION_PREFIX = /^\/(requestBody|query|path|header|cookie)(\/|$)/;

function decodePointer(pointer: string): string[] {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The field path an Ajv error is about, e.g. `metadata.tier`, `limit`, `Idempotency-Key`, or `body`. */
function fieldPath(error: ErrorObject, headerNames: Map<string, string>): string {
  const match = LOCATION_PREFIX.exec(error.instancePath);
  const location = match?.[1];
  const rest = decodePointer(error.instancePath.slice(match ? match[0].length - (match[2] ? 1 : 0) : 0));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    if (params.missingProperty === 'requestBody') return 'body';
    rest.push(params.missingProperty);
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    rest.push(params.additionalProperty);
  }
  // Errors about an object's key (propertyNames) carry the key on the error or in its params.
  const propertyName = error.propertyName ?? params.propertyName;
  if (typeof propertyName === 'string') rest.push(propertyName);
  if (location === 'header' && rest.length > 0) rest[0] = headerNames.get(rest[0]!) ?? rest[0]!;
  if (rest.length === 0) return location === 'requestBody' || location === undefined ? 'body' : location;
  return rest.join('.');
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return params.missingProperty === 'requestBody' ? 'a JSON request body is required' : 'is required';
    case 'additionalProperties':
      return 'is not a recognised field';
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `must match the pattern ${String(params.pattern)}`;
    case 'parse':
      return 'is not valid JSON';
    default:
      return error.message ?? 'is invalid';
  }
}

/** Builds the invalid_request error for a failed validation; `param` is the first failing field. */
export function validationError(errors: ErrorObject[], headerNames: Map<string, string>): DomainError {
  // A Map, not an object: field names such as `constructor` or `__proto__` are the client's text.
  const details = new Map<string, string[]>();
  // anyOf/oneOf add a summary error after their branches' errors; the branch errors say more.
  const useful = errors.filter((error) => error.keyword !== 'anyOf' && error.keyword !== 'oneOf');
  for (const error of useful.length > 0 ? useful : errors) {
    const path = fieldPath(error, headerNames);
    const message = describe(error);
    const list = details.get(path) ?? details.set(path, []).get(path)!;
    if (!list.includes(message)) list.push(message);
  }
  const [param, messages] = [...details][0] ?? ['body', ['is invalid']];
  return new DomainError('invalid_request', `${param}: ${messages[0]}`, {
    param,
    details: Object.fromEntries(details),
  });
}

/**
 * The first query parameter name in `querystring` (brackets stripped) that `declared` does not hold.
 * The query parser silently drops names such as `constructor` or `__proto__`, so schema validation
 * never sees them.
 */
export function undeclaredQueryParameter(querystring: string, declared: ReadonlySet<string>): string | null {
  for (const name of new URLSearchParams(querystring).keys()) {
    const base = name.replace(/\[.*$/s, '');
    if (!declared.has(base)) return base;
  }
  return null;
}
