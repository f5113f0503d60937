// JSON Schema (2020-12, as used by OpenAPI 3.1) -> fast-check arbitraries of valid values.
import fc from 'fast-check';
import { mergeAllOf, resolve, type Schema, type SpecDocument } from './spec/document.js';

/** Upper bounds that keep generated requests small; the schema's own bounds apply below them. */
const MAX_STRING = 40;
const MAX_ITEMS = 4;
const MAX_KEYS = 4;

// The spec's conventions refuse U+0000 in any string (PostgreSQL cannot store it).
const text = (minLength: number, maxLength: number) =>
  fc.string({ unit: 'binary', minLength, maxLength }).filter((value) => !value.includes('\u0000'));

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, minLength + MAX_STRING));
  const fitsLength = (value: string) =>
    [...value].length >= minLength && [...value].length <= (schema.maxLength ?? Infinity);
  // Any other format, or none, is left to the pattern or plain text below.
  switch (schema.format ?? '') {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress().filter(fitsLength);
    case 'uri':
      return fc.webUrl().filter(fitsLength);
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
        .map((date) => date.toISOString());
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fitsLength);
  return text(minLength, maxLength);
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? schema.exclusiveMinimum;
  const max = schema.maximum ?? schema.exclusiveMaximum;
  const notExcluded = (value: number) => value !== schema.exclusiveMinimum && value !== schema.exclusiveMaximum;
  if (integer) {
    return fc.integer({ min: min ?? -1_000_000, max: max ?? 1_000_000 }).filter(notExcluded);
  }
  return fc.double({ min: min ?? -1e9, max: max ?? 1e9, noNaN: true, noDefaultInfinity: true }).filter(notExcluded);
}

function objectArbitrary(document: SpecDocument, schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = (schema.required as string[] | undefined) ?? [];
  const known = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, arbitraryFor(document, property)])),
    { requiredKeys: required.filter((name) => name in properties) },
  );
  const extra = schema.additionalProperties;
  if (!extra || typeof extra !== 'object') return known;
  const names = schema.propertyNames ?? {};
  const keys = stringArbitrary({ minLength: 1, ...names }).filter((key) => !(key in properties));
  const maxKeys = Math.min(schema.maxProperties ?? MAX_KEYS, MAX_KEYS);
  return fc
    .tuple(known, fc.dictionary(keys, arbitraryFor(document, extra), { maxKeys }))
    .map(([fixed, free]) => ({ ...free, ...fixed }));
}

function arrayArbitrary(document: SpecDocument, schema: Schema): fc.Arbitrary<unknown[]> {
  const items = arbitraryFor(document, schema.items ?? {});
  const minLength = schema.minItems ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, minLength + MAX_ITEMS));
  return schema.uniqueItems
    ? fc.uniqueArray(items, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
    : fc.array(items, { minLength, maxLength });
}

/**
 * An arbitrary of values the schema accepts, for the keywords this spec uses (type and type arrays,
 * const, enum, formats, pattern, lengths, bounds, objects, arrays, oneOf/anyOf/allOf). Callers filter
 * the result through a real validator, so a rare imperfect value is dropped, never sent as "valid".
 */
export function arbitraryFor(document: SpecDocument, raw: Schema): fc.Arbitrary<unknown> {
  const schema = resolve<Schema>(document, raw);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (Array.isArray(schema.allOf)) return arbitraryFor(document, mergeAllOf(document, schema));
  const choices = schema.oneOf ?? schema.anyOf;
  if (choices)
    return fc.oneof(
      ...choices.map((choice) =>
        arbitraryFor(document, { ...schema, oneOf: undefined, anyOf: undefined, ...resolve<Schema>(document, choice) }),
      ),
    );
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['object'];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer':
          return numberArbitrary(schema, true);
        case 'number':
          return numberArbitrary(schema, false);
        case 'string':
          return stringArbitrary(schema);
        case 'array':
          return arrayArbitrary(document, schema);
        default:
          return objectArbitrary(document, schema);
      }
    }),
  );
}
