// Ajv errors as the API reports them: a field path per error (`metadata.tier`, `limit`, `Idempotency-Key`)
// and a message written for integrators. Shared by request validation and the CSV import.
import type { ErrorObject } from 'ajv';

const LOCATION_PREFIX = /^\/(requestBody|query|path|header|cookie)(\/|$)/;

function decodePointer(pointer: string): string[] {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The field path an Ajv error is about, e.g. `metadata.tier`, `limit`, `Idempotency-Key`, or `body`. */
function fieldPath(error: ErrorObject, headerNames: ReadonlyMap<string, string> = new Map()): string {
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

/** The message for one Ajv error, as the API words it. */
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
    case 'type':
      return `must be ${[params.type].flat().map(String).join(' or ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** What a nullable field's null branch says when the value matched neither branch. */
const NULL_BRANCH = 'must be null';

/**
 * Each failing field's messages, in the order Ajv found them (a Map: field names are the client's text,
 * `__proto__` included). anyOf/oneOf summaries are left out when their branches said more, and so is
 * the null branch of a nullable field when another branch says what the value should have been.
 */
export function messagesByField(
  errors: readonly ErrorObject[],
  headerNames: ReadonlyMap<string, string> = new Map(),
): Map<string, string[]> {
  const details = new Map<string, string[]>();
  const useful = errors.filter((error) => error.keyword !== 'anyOf' && error.keyword !== 'oneOf');
  for (const error of useful.length > 0 ? useful : errors) {
    const path = fieldPath(error, headerNames);
    const message = describe(error);
    const list = details.get(path) ?? details.set(path, []).get(path)!;
    if (!list.includes(message)) list.push(message);
  }
  for (const [path, messages] of details) {
    if (messages.length > 1 && messages.includes(NULL_BRANCH)) {
      details.set(
        path,
        messages.filter((message) => message !== NULL_BRANCH),
      );
    }
  }
  return details;
}
