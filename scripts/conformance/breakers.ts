// Invalid values: for a schema, values that each break exactly one of its constraints.
import { mergeAllOf, resolve, type Schema, type SpecDocument } from '../../test/support/spec/document.js';

/** One broken constraint: the value to put at `at` (relative to the schema's value), or DELETE. */
export interface Breaker {
  label: string;
  at: string[];
  value: unknown;
  /** Where the error is, below `at`, when it is deeper than the replaced value (an array item). */
  below?: string[];
  /** Broken by a rule of the spec's prose (not its schemas), so a schema validator accepts it. */
  prose?: true;
}

/** Marks a breaker that removes the field instead of replacing it. */
export const DELETE = Symbol('delete');

/** A field name no schema declares. */
export const UNKNOWN_FIELD = 'zz_undeclared_field';

const BAD_FORMATS: Record<string, string> = {
  uuid: 'not-a-uuid',
  email: 'not-an-email',
  uri: 'not a uri',
  'date-time': 'yesterday',
};

/** The schema's own type list; for oneOf/anyOf the union of its branches'. */
function typesOf(document: SpecDocument, schema: Schema): Set<string> {
  const types = new Set<string>();
  const add = (node: Schema) => {
    if (Array.isArray(node.type)) for (const type of node.type as string[]) types.add(type);
    else if (typeof node.type === 'string') types.add(node.type);
    else if (Array.isArray(node.enum))
      for (const value of node.enum as unknown[]) types.add(value === null ? 'null' : typeof value);
  };
  add(schema);
  for (const branch of ((schema.oneOf ?? schema.anyOf) as Schema[] | undefined) ?? []) add(resolve(document, branch));
  if (types.has('integer')) types.add('number');
  return types;
}

/** The branch of a oneOf/anyOf that carries the constraints (the first that is not just null). */
function constrained(document: SpecDocument, schema: Schema): Schema {
  const branches = ((schema.oneOf ?? schema.anyOf) as Schema[] | undefined)?.map((branch) =>
    resolve<Schema>(document, branch),
  );
  return branches?.find((branch) => branch.type !== 'null') ?? schema;
}

function patternViolator(pattern: string, asHeader: boolean): string | undefined {
  const regex = new RegExp(pattern, 'u');
  return (asHeader ? ['has space', 'a b'] : ['not valid ✗', '#', ' ', 'x', '0']).find(
    (candidate) => !regex.test(candidate),
  );
}

/**
 * Values that break one constraint of `raw` each, replacing the value at the schema's position.
 * `stringly` is for query and header parameters, whose values travel as text.
 */
export function scalarBreakers(
  document: SpecDocument,
  raw: Schema,
  stringly = false,
): Array<{ label: string; value: unknown; prose?: true }> {
  const outer = resolve<Schema>(document, raw);
  const schema = constrained(document, outer);
  const types = typesOf(document, outer);
  const found: Array<{ label: string; value: unknown; prose?: true }> = [];
  const wrong = stringly
    ? types.has('number')
      ? 'ten'
      : undefined
    : [
        ['string', 'text'],
        ['number', 12345],
        ['boolean', true],
        ['object', { nested: 1 }],
      ].find(([type]) => !types.has(type as string))?.[1];
  if (wrong !== undefined && types.size > 0) found.push({ label: `wrong type (${typeof wrong})`, value: wrong });
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string')) {
    found.push({ label: 'value not in the enum', value: 'zz_not_in_enum' });
  }
  const render = (value: number) => (stringly ? String(value) : value);
  if (types.has('number') && typeof schema.minimum === 'number')
    found.push({ label: 'below minimum', value: render(schema.minimum - 1) });
  if (types.has('number') && typeof schema.maximum === 'number')
    found.push({ label: 'above maximum', value: render(schema.maximum + 1) });
  if (types.has('integer')) found.push({ label: 'not an integer', value: render(1.5) });
  if (types.has('string') && !Array.isArray(schema.enum)) {
    const format = BAD_FORMATS[schema.format as string];
    if (format) found.push({ label: `bad ${String(schema.format)} format`, value: format });
    if (typeof schema.pattern === 'string') {
      const violator = patternViolator(schema.pattern, stringly);
      if (violator !== undefined) found.push({ label: 'does not match the pattern', value: violator });
    }
    if (typeof schema.minLength === 'number' && schema.minLength > 0)
      found.push({ label: 'shorter than minLength', value: '' });
    if (typeof schema.maxLength === 'number')
      found.push({ label: 'longer than maxLength', value: 'a'.repeat(schema.maxLength + 1) });
    // The spec's conventions: strings must not contain U+0000.
    if (!stringly && !schema.format && !schema.pattern)
      found.push({ label: 'contains U+0000', value: 'a\u0000b', prose: true });
  }
  return found;
}

/** Breakers for a JSON value of schema `raw`, recursing into object properties and array items. */
export function valueBreakers(document: SpecDocument, raw: Schema, value: unknown, depth = 0): Breaker[] {
  const outer = resolve<Schema>(document, raw);
  const schema = Array.isArray(outer.allOf) ? mergeAllOf(document, outer) : constrained(document, outer);
  const found: Breaker[] = scalarBreakers(document, outer).map((breaker) => ({ ...breaker, at: [] }));
  const types = typesOf(document, outer);
  const within = (key: string, breakers: Breaker[]) =>
    breakers.map((breaker) => ({ ...breaker, at: [key, ...breaker.at] }));
  if (types.has('object') || schema.properties) {
    const current = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<
      string,
      unknown
    >;
    for (const name of (schema.required as string[] | undefined) ?? [])
      found.push({ label: 'missing required field', at: [name], value: DELETE });
    if (schema.additionalProperties === false) found.push({ label: 'unknown field', at: [UNKNOWN_FIELD], value: 1 });
    if (depth < 2) {
      for (const [name, property] of Object.entries((schema.properties as Record<string, Schema>) ?? {})) {
        found.push(...within(name, valueBreakers(document, property, current[name], depth + 1)));
      }
    }
    const extra = schema.additionalProperties;
    if (extra && typeof extra === 'object') {
      if (typeof schema.maxProperties === 'number') {
        found.push({
          label: 'more than maxProperties keys',
          at: [],
          value: Object.fromEntries(Array.from({ length: schema.maxProperties + 1 }, (_, i) => [`k${i}`, i])),
        });
      }
      const maxKey = (schema.propertyNames as Schema | undefined)?.maxLength;
      if (typeof maxKey === 'number')
        found.push({ label: 'key longer than propertyNames.maxLength', at: ['k'.repeat(maxKey + 1)], value: 1 });
      found.push(...within('k', valueBreakers(document, extra as Schema, undefined, depth + 1)));
    }
  }
  if (types.has('array')) {
    const current = Array.isArray(value) ? value : [];
    const itemSchema = resolve<Schema>(document, (schema.items as Schema | undefined) ?? {});
    const sampleItem = current[0] ?? (Array.isArray(itemSchema.enum) ? itemSchema.enum[0] : undefined);
    if (typeof schema.minItems === 'number' && schema.minItems > 0)
      found.push({ label: 'fewer than minItems', at: [], value: [] });
    if (typeof schema.maxItems === 'number' && sampleItem !== undefined) {
      const pool = Array.isArray(itemSchema.enum) ? (itemSchema.enum as unknown[]) : [sampleItem];
      found.push({
        label: 'more than maxItems',
        at: [],
        value: Array.from({ length: schema.maxItems + 1 }, (_, i) => pool[i % pool.length]),
      });
    }
    if (schema.uniqueItems && sampleItem !== undefined)
      found.push({ label: 'duplicate items', at: [], value: [sampleItem, sampleItem] });
    // An item's breakers replace the whole array with that one broken item, so the path is `<field>.0`.
    for (const breaker of valueBreakers(document, itemSchema, sampleItem, depth + 1).filter((b) => b.at.length === 0)) {
      found.push({ ...breaker, label: `item ${breaker.label}`, value: [breaker.value], below: ['0'] });
    }
  }
  return found;
}
