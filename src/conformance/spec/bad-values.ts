// Values that break a schema, each by one rule: the constraints it declares (type, enum, format, pattern,
// lengths, bounds, required and unknown members, keys, items), the rules of the spec's prose (no U+0000,
// no unpaired surrogates, finite numbers), and hostile variants of a valid value (SQL, bidi and invisible
// characters, look-alikes, numbers past 2^53, 10,000-deep nesting). Body values are JSON text, so the ones
// JavaScript cannot write (1e400, 2^53+1) reach a server's parser as written. The same schema and valid
// value always give the same values in the same order.
import { mergeAllOf, resolve, type Schema, type SpecDocument } from './document.js';
import { fullWidth, nested, SQL_INJECTION, UNSTORABLE_TEXT } from './hostile-input.js';

/** Marks a bad value that leaves its member out instead of setting it. */
export const REMOVE = Symbol('remove');

/** A member name no schema declares. */
export const UNKNOWN_FIELD = 'zz_undeclared_field';

/** One value that breaks a schema. */
export interface BadValue {
  label: string;
  /** Where it goes: member names below the schema's value ([] replaces the value itself). */
  at: string[];
  /** Its JSON text, or REMOVE. */
  json: string | typeof REMOVE;
  /** Where the error is below `at` when it is deeper than the value put there (an array's item, a nested member). */
  below?: string[];
  /** Refused by a rule of the spec's prose, not by its schemas: a schema validator accepts it. */
  prose?: true;
}

/** One bad value of a parameter, which travels as text (query, header, path). */
export interface BadText {
  label: string;
  text: string;
}

const SAMPLE_BY_TYPE: Record<string, string> = {
  string: '"text"',
  integer: '7',
  number: '1.5',
  boolean: 'true',
  null: 'null',
  array: '[]',
  object: '{}',
};

const BAD_FORMATS: Record<string, string> = {
  uuid: 'not-a-uuid',
  email: 'not-an-email',
  uri: 'not a uri',
  'date-time': 'yesterday',
};

const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** The JSON types a schema allows, from `type`, `enum`/`const` and `oneOf`/`anyOf`; none when it says nothing. */
function allowedTypes(document: SpecDocument, raw: unknown): Set<string> {
  const schema = resolve(document, raw);
  if (schema.type) return new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
  const values = schema.enum ?? ('const' in schema ? [schema.const] : undefined);
  if (values) return new Set(values.map(jsonType));
  const branches = (schema.oneOf ?? schema.anyOf ?? []) as unknown[];
  return new Set(branches.flatMap((branch) => [...allowedTypes(document, branch)]));
}

/** A string the pattern refuses; header values get candidates a header can carry. */
function patternViolator(pattern: string, asHeader: boolean): string | undefined {
  const regex = new RegExp(pattern, 'u');
  return (asHeader ? ['has space', 'a b'] : ['not valid ✗', '#', ' ', 'x', '0']).find(
    (candidate) => !regex.test(candidate),
  );
}

/** Values that each break one declared constraint of a scalar: enum, bounds, integer, format, pattern, lengths. */
function constraintBreakers(
  schema: Schema,
  types: Set<string>,
  valid: string | undefined,
  asText: boolean,
): Array<{ label: string; value: string | number }> {
  const found: Array<{ label: string; value: string | number }> = [];
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string'))
    found.push({ label: 'a value not in the enum', value: 'zz_not_in_enum' });
  const numeric = types.has('integer') || types.has('number');
  if (numeric && typeof schema.minimum === 'number')
    found.push({ label: 'below the minimum', value: schema.minimum - 1 });
  if (numeric && typeof schema.maximum === 'number')
    found.push({ label: 'above the maximum', value: schema.maximum + 1 });
  if (types.has('integer')) found.push({ label: 'a fraction', value: (schema.minimum ?? 1) + 0.5 });
  if (types.has('string') && !Array.isArray(schema.enum)) {
    const format = BAD_FORMATS[schema.format as string];
    if (format) found.push({ label: `a bad ${schema.format} format`, value: format });
    if (typeof schema.pattern === 'string') {
      const violator = patternViolator(schema.pattern, asText);
      if (violator !== undefined) found.push({ label: 'not matching the pattern', value: violator });
    }
    if (schema.minLength) found.push({ label: 'an empty string', value: '' });
    if (typeof schema.maxLength === 'number')
      found.push({
        label: `${schema.maxLength + 1} characters`,
        value: (valid || 'x').padEnd(schema.maxLength + 1, 'x'),
      });
  }
  return found;
}

const bad = (label: string, json: string, prose?: true): BadValue => ({
  label,
  at: [],
  json,
  ...(prose ? { prose } : {}),
});
const badString = (label: string, string: string, prose?: true) => bad(label, JSON.stringify(string), prose);

/**
 * Text the prose refuses in any string, and hostile variants of a valid value of a pattern, format or
 * enum; a variant is kept for a pattern alone only when the pattern refuses it (`\S` takes them all).
 */
function hostileStrings(schema: Schema, valid: string | undefined): BadValue[] {
  const found = UNSTORABLE_TEXT.map(([label, string]) => badString(label, string, true));
  const constrained = Boolean(schema.pattern || schema.format || schema.enum);
  if (constrained) {
    if (valid === undefined)
      throw new Error(`no valid example value for a constrained string (${JSON.stringify(schema)})`);
    const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
    const refused = (value: string) => Boolean(schema.format || schema.enum) || !pattern!.test(value);
    const variants: Array<[string, string]> = [
      ...SQL_INJECTION.map((string): [string, string] => [`SQL ${string}`, string]),
      ['an RTL override appended', `${valid}\u202e`],
      ['an emoji appended', `${valid}😀`],
      ['a zero-width space in front', `\u200b${valid}`],
      ['spaces around', ` ${valid} `],
      ['full-width characters', fullWidth(valid)],
    ];
    found.push(...variants.filter(([, value]) => refused(value)).map(([label, value]) => badString(label, value)));
  }
  if (constrained || (schema.maxLength ?? Infinity) < 10_000)
    found.push(badString('10,000 characters', 'x'.repeat(10_000)));
  return found;
}

/** Integers JSON can write but a server must refuse: in a string, past 2^53, overflowing to Infinity or 0, negative. */
function hostileIntegers(schema: Schema): BadValue[] {
  const min = schema.minimum;
  const found = [
    bad('a number in a string', JSON.stringify(String(min ?? 1))),
    bad('2^53+1', '9007199254740993'),
    bad('-(2^53+1)', '-9007199254740993'),
    bad('1e400 (Infinity once parsed)', '1e400', true),
    bad('-1e400', '-1e400', true),
    bad('400 digits', '9'.repeat(400), true),
  ];
  if (min !== undefined && min >= 0) found.push(bad('negative', '-1'));
  if (min !== undefined && min > 0) found.push(bad('1e-400 (0 once parsed)', '1e-400'));
  return found;
}

/** Values for one branch of a schema (the schema itself when it has no oneOf/anyOf). */
function branchValues(document: SpecDocument, branch: Schema, valid: unknown, depth: number): BadValue[] {
  const types = allowedTypes(document, branch);
  const example = (branch.examples as unknown[] | undefined)?.[0] ?? branch.enum?.[0];
  const validText = typeof valid === 'string' ? valid : typeof example === 'string' ? example : undefined;
  const found = constraintBreakers(branch, types, validText, false).map((broken) =>
    bad(broken.label, JSON.stringify(broken.value)),
  );
  if (types.has('string')) found.push(...hostileStrings(branch, validText));
  if (types.has('integer')) found.push(...hostileIntegers(branch));
  else if (types.has('number'))
    found.push(bad('1e400 (Infinity once parsed)', '1e400', true), bad('-1e400', '-1e400', true));
  if (types.has('array')) found.push(...arrayValues(document, branch, valid, depth));
  if (types.has('object') || branch.properties) found.push(...objectValues(document, branch, valid, depth));
  return found;
}

/** The values of `inner` moved below the member `name`. */
const within = (name: string, inner: BadValue[]) => inner.map((bad) => ({ ...bad, at: [name, ...bad.at] }));

function objectValues(document: SpecDocument, schema: Schema, valid: unknown, depth: number): BadValue[] {
  const current = (valid && typeof valid === 'object' && !Array.isArray(valid) ? valid : {}) as Record<string, unknown>;
  const found: BadValue[] = [];
  for (const name of (schema.required ?? []) as string[]) found.push({ label: 'missing', at: [name], json: REMOVE });
  if (schema.minProperties) found.push(bad('an empty object', '{}'));
  if (schema.additionalProperties === false) found.push({ label: 'an unknown member', at: [UNKNOWN_FIELD], json: '1' });
  if (depth < 2) {
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      found.push(...within(name, collect(document, property, current[name], depth + 1)));
  }
  if (schema.additionalProperties !== undefined) {
    found.push({ label: 'nested 10,000 deep', at: ['a'], json: nested(9_999, 'object') });
    for (const [label, key] of UNSTORABLE_TEXT)
      found.push({ label: `a key with ${label}`, at: [key], json: '1', prose: true });
  }
  if (typeof schema.maxProperties === 'number') {
    const keys = (count: number) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])));
    found.push(bad(`${schema.maxProperties + 1} keys`, keys(schema.maxProperties + 1)), bad('5,000 keys', keys(5_000)));
  }
  const names = resolve(document, schema.propertyNames ?? {});
  if (typeof names.maxLength === 'number')
    found.push({ label: 'a key too long', at: ['k'.repeat(names.maxLength + 1)], json: '1' });
  if (names.minLength) found.push({ label: 'an empty key', at: [''], json: '1' });
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object') found.push(...within('k', collect(document, extra, current.k, depth + 1)));
  return found;
}

function arrayValues(document: SpecDocument, schema: Schema, valid: unknown, depth: number): BadValue[] {
  const itemSchema = resolve(document, schema.items ?? {});
  const item = (Array.isArray(valid) ? (valid as unknown[])[0] : undefined) ?? itemSchema.enum?.[0] ?? 'x';
  const found: BadValue[] = [{ label: 'nested 10,000 deep', at: [], json: nested(10_000, 'array'), below: ['0'] }];
  if (schema.minItems) found.push(bad('an empty array', '[]'));
  if (typeof schema.maxItems === 'number') {
    // Distinct items where the schema lists them, so only the count is wrong.
    const pool = Array.isArray(itemSchema.enum) ? itemSchema.enum : [item];
    const items = Array.from({ length: schema.maxItems + 1 }, (_, i) => pool[i % pool.length]);
    found.push(bad(`${schema.maxItems + 1} items`, JSON.stringify(items)));
  }
  if (schema.uniqueItems) found.push(bad('a duplicate item', JSON.stringify([item, item])));
  for (const inner of collect(document, itemSchema, item, depth + 1)) {
    if (inner.at.length > 0 || inner.json === REMOVE) continue;
    found.push({
      ...inner,
      label: `an item with ${inner.label}`,
      json: `[${inner.json}]`,
      below: ['0', ...(inner.below ?? [])],
    });
  }
  return found;
}

function collect(document: SpecDocument, raw: unknown, valid: unknown, depth: number): BadValue[] {
  const outer = resolve(document, raw);
  const schema = Array.isArray(outer.allOf) ? mergeAllOf(document, outer) : outer;
  const allowed = allowedTypes(document, schema);
  const found = Object.entries(SAMPLE_BY_TYPE)
    .filter(([type]) => allowed.size > 0 && !allowed.has(type) && !(type === 'integer' && allowed.has('number')))
    .map(([type, json]) => bad(`a value of type ${type}`, json));
  const branches = ((schema.oneOf ?? schema.anyOf) as unknown[] | undefined)?.map((branch) =>
    resolve(document, branch),
  );
  for (const branch of branches?.filter((candidate) => candidate.type !== 'null') ?? [schema])
    found.push(...branchValues(document, branch, valid, depth));
  return found;
}

/**
 * Values that schema `raw` refuses, built around `valid` (a value it accepts; where it lacks a member, that
 * member's examples or first enum value stand in), recursing two levels into members and into every item
 * and additional member. Each (place, value) pair comes once, with the first label that gave it. Throws
 * when a string with a pattern, format or enum has no valid value to vary.
 */
export function badValues(document: SpecDocument, raw: unknown, valid: unknown): BadValue[] {
  const seen = new Set<string>();
  return collect(document, raw, valid, 0).filter((bad) => {
    const key = JSON.stringify([bad.at, bad.json === REMOVE ? null : bad.json]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Text values that parameter schema `raw` refuses, each breaking one declared constraint. */
export function badParameterValues(document: SpecDocument, raw: unknown): BadText[] {
  const outer = resolve(document, raw);
  const types = allowedTypes(document, outer);
  const branch =
    ((outer.oneOf ?? outer.anyOf) as unknown[] | undefined)
      ?.map((candidate) => resolve(document, candidate))
      .find((candidate) => candidate.type !== 'null') ?? outer;
  const found = constraintBreakers(branch, types, undefined, true).map(({ label, value: broken }) => ({
    label,
    text: String(broken),
  }));
  return types.has('integer') || types.has('number') ? [{ label: 'not a number', text: 'ten' }, ...found] : found;
}
