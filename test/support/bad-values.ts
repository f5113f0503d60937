// Values that break a JSON schema, as raw JSON text (so 1e400 and 2^53+1 reach the server's parser as
// written), chosen from what the schema declares: types, pattern/format/enum, bounds, lengths, items, keys.
import { resolve, type Schema as SpecNode } from './spec/document.js';
import { publishedSpec } from './spec/published.js';

const deref = (node: unknown): SpecNode => resolve(publishedSpec, node);

/** A bad value: its JSON text and what is wrong with it. */
export interface BadValue {
  label: string;
  json: string;
}

/** Strings that would change a query if they were ever spliced into SQL. */
export const SQL_INJECTION = [
  "' OR '1'='1",
  "'; DROP TABLE calls; --",
  '1 UNION SELECT secret FROM webhooks --',
  '$$; DELETE FROM orgs; $$',
];

/** Text PostgreSQL cannot store as sent. */
export const UNSTORABLE_TEXT: Array<[string, string]> = [
  ['a NUL character', 'a\u0000b'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', 'a\udc00b'],
  ['a reversed surrogate pair', '\ude00\ud83d'],
];

/** JSON nested `depth` levels deep, as arrays or objects. */
export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
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

/** The JSON types a schema allows, from `type`, `enum`/`const` and `oneOf`/`anyOf` branches; every type when unconstrained. */
function allowedTypes(raw: SpecNode): Set<string> {
  const schema = deref(raw);
  if (schema.type) return new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
  const values = schema.enum ?? ('const' in schema ? [schema.const] : undefined);
  if (values)
    return new Set(
      (values as unknown[]).map((value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)),
    );
  const branches = (schema.oneOf ?? schema.anyOf) as SpecNode[] | undefined;
  if (branches) return new Set(branches.flatMap((branch) => [...allowedTypes(branch)]));
  return new Set(Object.keys(SAMPLE_BY_TYPE));
}

const text = (label: string, value: string): BadValue => ({ label, json: JSON.stringify(value) });

/** The text with its printable ASCII characters swapped for their full-width look-alikes. */
export function fullWidth(value: string): string {
  return value.replace(/[\x21-\x7e]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
}

function wrongTypes(schema: SpecNode): BadValue[] {
  const allowed = allowedTypes(schema);
  return Object.entries(SAMPLE_BY_TYPE)
    .filter(([type]) => !allowed.has(type) && !(type === 'integer' && allowed.has('number')))
    .map(([type, json]) => ({ label: `a value of type ${type}`, json }));
}

function badStrings(schema: SpecNode, valid: string | undefined): BadValue[] {
  const bad = UNSTORABLE_TEXT.map(([label, value]) => text(label, value));
  const constrained = Boolean(schema.pattern || schema.format || schema.enum);
  if (constrained) {
    if (valid === undefined)
      throw new Error(`no valid example value for a constrained string (${JSON.stringify(schema)})`);
    bad.push(
      ...SQL_INJECTION.map((value) => text(`SQL ${value}`, value)),
      text('an RTL override appended', `${valid}\u202e`),
      text('an emoji appended', `${valid}😀`),
      text('a zero-width space in front', `\u200b${valid}`),
      text('spaces around', ` ${valid} `),
      text('full-width characters', fullWidth(valid)),
    );
  }
  if (typeof schema.maxLength === 'number')
    bad.push(text(`${schema.maxLength + 1} characters`, (valid || 'x').padEnd(schema.maxLength + 1, 'x')));
  if (schema.minLength) bad.push(text('an empty string', ''));
  if (constrained || (schema.maxLength ?? Infinity) < 10_000) bad.push(text('10,000 characters', 'x'.repeat(10_000)));
  return bad;
}

function badIntegers(schema: SpecNode): BadValue[] {
  const min = schema.minimum as number | undefined;
  const max = schema.maximum as number | undefined;
  const bad: BadValue[] = [
    { label: 'a number in a string', json: JSON.stringify(String(min ?? 1)) },
    { label: 'a fraction', json: String((min ?? 0) + 0.5) },
    { label: '2^53+1', json: '9007199254740993' },
    { label: '-(2^53+1)', json: '-9007199254740993' },
    { label: '1e400 (Infinity once parsed)', json: '1e400' },
    { label: '-1e400', json: '-1e400' },
    { label: '400 digits', json: '9'.repeat(400) },
  ];
  if (min !== undefined) bad.push({ label: 'below the minimum', json: String(min - 1) });
  if (min !== undefined && min >= 0) bad.push({ label: 'negative', json: '-1' });
  if (min !== undefined && min > 0) bad.push({ label: '1e-400 (0 once parsed)', json: '1e-400' });
  if (max !== undefined) bad.push({ label: 'above the maximum', json: String(max + 1) });
  return bad;
}

function badNumbers(): BadValue[] {
  return [
    { label: '1e400 (Infinity once parsed)', json: '1e400' },
    { label: '-1e400', json: '-1e400' },
  ];
}

function badArrays(schema: SpecNode, valid: unknown[] | undefined): BadValue[] {
  const item = valid?.[0] ?? 'x';
  const bad: BadValue[] = [{ label: 'nested 10,000 deep', json: nested(10_000, 'array') }];
  if (schema.minItems) bad.push({ label: 'an empty array', json: '[]' });
  if (typeof schema.maxItems === 'number')
    bad.push({ label: 'too many items', json: JSON.stringify(Array(schema.maxItems + 1).fill(item)) });
  if (schema.uniqueItems) bad.push({ label: 'a duplicate item', json: JSON.stringify([item, item]) });
  for (const inner of badValuesFor(schema.items ?? {}, item))
    bad.push({ label: `an item with ${inner.label}`, json: `[${inner.json}]` });
  return bad;
}

function badObjects(schema: SpecNode): BadValue[] {
  const bad: BadValue[] = [{ label: 'nested 10,000 deep', json: nested(10_000, 'object') }];
  if (typeof schema.maxProperties === 'number') {
    bad.push({
      label: '5,000 keys',
      json: JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 0]))),
    });
  }
  const names = deref(schema.propertyNames ?? {});
  if (typeof names.maxLength === 'number')
    bad.push({ label: 'a key too long', json: JSON.stringify({ ['k'.repeat(names.maxLength + 1)]: 1 }) });
  if (names.minLength) bad.push({ label: 'an empty key', json: '{"":1}' });
  for (const [label, value] of UNSTORABLE_TEXT)
    bad.push({ label: `a key with ${label}`, json: JSON.stringify({ [value]: 1 }) });
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    for (const inner of badValuesFor(schema.additionalProperties, 'x'))
      bad.push({ label: `a value with ${inner.label}`, json: `{"k":${inner.json}}` });
  }
  return bad;
}

function typedBadValues(schema: SpecNode, valid: unknown): BadValue[] {
  const types = allowedTypes(schema);
  const bad: BadValue[] = [];
  if (types.has('string'))
    bad.push(...badStrings(schema, typeof valid === 'string' ? valid : (schema.examples?.[0] ?? schema.enum?.[0])));
  if (types.has('integer')) bad.push(...badIntegers(schema));
  else if (types.has('number')) bad.push(...badNumbers());
  if (types.has('array')) bad.push(...badArrays(schema, Array.isArray(valid) ? valid : undefined));
  if (types.has('object') && schema.additionalProperties !== undefined) bad.push(...badObjects(schema));
  return bad;
}

/** Values `schema` refuses (each must get invalid_request), built around `valid`, a value it accepts. */
export function badValuesFor(raw: SpecNode, valid: unknown): BadValue[] {
  const schema = deref(raw);
  const branches = ((schema.oneOf ?? schema.anyOf) as SpecNode[] | undefined)?.map(deref) ?? [schema];
  // Each branch's own bad values: the spec's unions never give two branches the same type.
  return [
    ...wrongTypes(schema),
    ...branches.filter((branch) => branch.type !== 'null').flatMap((branch) => typedBadValues(branch, valid)),
  ];
}
