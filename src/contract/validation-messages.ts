// Ajv errors as the API reports them: a field path per error (`metadata.tier`, `limit`, `Idempotency-Key`)
// and a message written for integrators. Shared by request validation and the CSV import.
import type { ErrorObject } from 'ajv';
import { formatWords, patternWords } from './format-words.js';
import { mayQuote, quoteValue } from './refused-value.js';

const LOCATION_PREFIX = /^\/(requestBody|query|path|header|cookie)(\/|$)/;

function decodePointer(pointer: string): string[] {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Where an Ajv error points: the request part (`requestBody`, `header`...) if any, and the keys below it. */
function pointerParts(error: ErrorObject): { location: string | undefined; rest: string[] } {
  const match = LOCATION_PREFIX.exec(error.instancePath);
  const rest = decodePointer(error.instancePath.slice(match ? match[0].length - (match[2] ? 1 : 0) : 0));
  return { location: match?.[1], rest };
}

/** The value at a JSON pointer's keys in `data` (own properties only), or undefined. */
function valueAt(data: unknown, keys: readonly string[]): unknown {
  return keys.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === 'object' ? Object.getOwnPropertyDescriptor(node, key)?.value : undefined,
    data,
  );
}

/** The field path an Ajv error is about, e.g. `metadata.tier`, `limit`, `Idempotency-Key`, or `body`. */
function fieldPath(error: ErrorObject, headerNames: ReadonlyMap<string, string>): string {
  const { location, rest } = pointerParts(error);
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

/** `; got "…"` naming the value an error refused, when it was validated and may be quoted; else nothing. */
function refusedValue(error: ErrorObject, data: unknown): string {
  if (data === undefined) return '';
  const { location, rest } = pointerParts(error);
  if (!mayQuote(location, rest)) return '';
  const value = valueAt(data, decodePointer(error.instancePath));
  return value === undefined ? '' : `; got ${quoteValue(value)}`;
}

/** A JSON type as a message names it. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** `n` and `word`, made plural unless `n` is 1. */
function counted(n: unknown, word: string): string {
  return `${String(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** The message for one Ajv error, as the API words it; `data` is what was validated, to quote refused values. */
function describe(error: ErrorObject, data: unknown): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return params.missingProperty === 'requestBody' ? 'a JSON request body is required' : 'is required';
    case 'additionalProperties':
      return 'is not a recognised field';
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return patternWords(String(params.pattern)) + refusedValue(error, data);
    case 'format':
      return formatWords(String(params.format)) + refusedValue(error, data);
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters long`;
    case 'minLength':
      return `must be at least ${String(params.limit)} character${params.limit === 1 ? '' : 's'} long`;
    case 'parse':
      return 'is not valid JSON';
    case 'type':
      return `must be ${[params.type]
        .flat()
        .map((type) => TYPE_WORDS[String(type)] ?? String(type))
        .join(' or ')}`;
    case 'minItems':
      return `must hold at least ${counted(params.limit, 'item')}`;
    case 'maxItems':
      return `must hold at most ${counted(params.limit, 'item')}`;
    case 'uniqueItems':
      return `must not hold the same item twice (items ${String(params.j)} and ${String(params.i)} are equal)`;
    case 'minProperties':
      return `must hold at least ${counted(params.limit, 'key')}`;
    case 'maxProperties':
      return `must hold at most ${counted(params.limit, 'key')}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be more than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** Keywords whose error only sums up the errors of their branches or of an object's keys. */
const SUMMARIES = new Set(['anyOf', 'oneOf', 'propertyNames']);

/** What a nullable field's null branch says when the value matched neither branch. */
const NULL_BRANCH = 'must be null';

/** What messagesByField may be told besides the errors. */
export interface MessageContext {
  /** What was validated: a refused value is quoted from it (never a header's, nor a secret-like field's). */
  data?: unknown;
  /** Header names as the spec spells them, by their lower-case form. */
  headerNames?: ReadonlyMap<string, string>;
}

/** The most fields a refusal lists (the spec's `ErrorBody.details`): a body of thousands of bad items is described by its first ones. */
export const MAX_FIELDS_LISTED = 50;

/**
 * Each failing field's messages, in the order Ajv found them, for the first MAX_FIELDS_LISTED fields (a
 * Map: field names are the client's text, `__proto__` included). anyOf, oneOf and propertyNames
 * summaries are left out when something said more, and so is the null branch of a nullable field when
 * another branch says what the value should have been.
 */
export function messagesByField(
  errors: readonly ErrorObject[],
  { data, headerNames = new Map() }: MessageContext = {},
): Map<string, string[]> {
  const details = new Map<string, string[]>();
  const useful = errors.filter((error) => !SUMMARIES.has(error.keyword));
  for (const error of useful.length > 0 ? useful : errors) {
    const path = fieldPath(error, headerNames);
    if (!details.has(path) && details.size === MAX_FIELDS_LISTED) break;
    const message = describe(error, data);
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
