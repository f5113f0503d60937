// The floor of a write: the statements the service sends for one kind of write, captured twice with
// two different request bodies, and for each parameter how the floor fills it in for a new request.
// A parameter equal in both captures is a constant; one that equals a field of the request body comes
// from the incoming body; a generated id, a timestamp or another generated value is made fresh.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Db } from '../../src/database/connect.js';
import { captureStatements, type StatementPlan } from './capture.js';

/** A request body of a write scenario: JSON fields by name. */
export type WriteBody = Record<string, unknown>;

/** Where the floor takes one parameter's value from. */
export type Binding =
  | { from: 'constant'; value: unknown }
  | { from: 'body'; field: string; json: boolean }
  | { from: 'fresh-uuid'; group: string }
  | { from: 'now' }
  | { from: 'fresh-text'; prefix: string }
  | { from: 'array'; items: Binding[] }
  | { from: 'object'; fields: Record<string, Binding> }
  | { from: 'json'; value: Binding };

/** One statement of a write floor: its SQL, how to fill each parameter, and the service's name for it. */
export interface WriteStatement {
  sql: string;
  bindings: Binding[];
  /** The name the service prepares the statement under; undefined when it sends it unprepared. */
  name?: string;
}

/** A write floor's statements in the order the service sent them (one per step). */
export type WritePlan = WriteStatement[];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const asText = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

/** A JSON object or array serialised in `value`, or undefined. */
function jsonValue(value: unknown): object | undefined {
  if (typeof value !== 'string' || !(value.startsWith('{') || value.startsWith('['))) return undefined;
  try {
    return JSON.parse(value) as object;
  } catch {
    return undefined;
  }
}

/** `value` when it is a plain object (not an array, date or null), else undefined. */
function plainObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The body field a captured value came from, in both captures, or undefined. */
function bodyField(a: unknown, b: unknown, bodies: [WriteBody, WriteBody]): Binding | undefined {
  for (const field of Object.keys(bodies[0])) {
    const [inA, inB] = [bodies[0][field], bodies[1][field]];
    if (a === inA && b === inB) return { from: 'body', field, json: false };
    if (typeof inA === 'object' && a === JSON.stringify(inA) && b === JSON.stringify(inB)) {
      return { from: 'body', field, json: true };
    }
  }
  return undefined;
}

/** How the floor fills a parameter that was `a` in the first capture and `b` in the second. */
function bindingOf(a: unknown, b: unknown, bodies: [WriteBody, WriteBody]): Binding {
  const [textA, textB] = [asText(a), asText(b)];
  if (textA === textB) return { from: 'constant', value: a };
  // An object or array inside a JSON parameter (such as an agent's empty provider_settings) that both
  // captures sent alike.
  if (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b))
    return { from: 'constant', value: a };
  const fromBody = bodyField(textA, textB, bodies);
  if (fromBody) return fromBody;
  if (typeof textA === 'string' && UUID.test(textA)) return { from: 'fresh-uuid', group: textA };
  if (typeof textA === 'string' && TIMESTAMP.test(textA)) return { from: 'now' };
  const parsed = [jsonValue(textA), jsonValue(textB)] as const;
  if (parsed[0] && parsed[1]) return { from: 'json', value: bindingOf(parsed[0], parsed[1], bodies) };
  const objects = [plainObject(a), plainObject(b)] as const;
  if (objects[0] && objects[1]) {
    const fields: Record<string, Binding> = {};
    for (const key of Object.keys(objects[0])) fields[key] = bindingOf(objects[0][key], objects[1][key], bodies);
    return { from: 'object', fields };
  }
  if (typeof textA === 'string') return { from: 'fresh-text', prefix: textA.slice(0, Math.max(0, textA.length - 12)) };
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return { from: 'array', items: a.map((item, i) => bindingOf(item, b[i], bodies)) };
  }
  throw new Error(`cannot tell how to fill a parameter that was ${JSON.stringify(a)}, then ${JSON.stringify(b)}`);
}

/**
 * Captures `write` for two bodies and derives the floor's plan. Throws when the two captures sent
 * different statements (the bodies took different paths) or a varying parameter has no known source.
 */
export async function captureWritePlan(
  pool: pg.Pool,
  write: (db: Db, body: WriteBody) => Promise<unknown>,
  bodies: [WriteBody, WriteBody],
): Promise<WritePlan> {
  const [first, second] = [
    await captureStatements(pool, (db) => write(db, bodies[0])),
    await captureStatements(pool, (db) => write(db, bodies[1])),
  ];
  const flat = (plan: StatementPlan) => plan.flat();
  const [a, b] = [flat(first), flat(second)];
  if (a.length !== b.length || a.some((statement, i) => statement.sql !== b[i]!.sql)) {
    throw new Error('the two sample writes sent different statements');
  }
  return a.map((statement, i) => ({
    sql: statement.sql,
    bindings: statement.parameters.map((value, j) => bindingOf(value, b[i]!.parameters[j], bodies)),
    ...(statement.name === undefined ? {} : { name: statement.name }),
  }));
}

/** Makes the parameter values of one request: fresh ids shared by every statement that used the same one. */
export function bindWrite(plan: WritePlan, body: WriteBody, unique: () => string): unknown[][] {
  const uuids = new Map<string, string>();
  const now = new Date().toISOString();
  const suffix = unique();
  const fill = (binding: Binding): unknown => {
    switch (binding.from) {
      case 'constant':
        return binding.value;
      case 'body': {
        const value = body[binding.field];
        return binding.json ? JSON.stringify(value) : value;
      }
      case 'fresh-uuid': {
        let id = uuids.get(binding.group);
        if (!id) uuids.set(binding.group, (id = randomUUID()));
        return id;
      }
      case 'now':
        return now;
      case 'fresh-text':
        return `${binding.prefix}${suffix}`;
      case 'array':
        return binding.items.map(fill);
      case 'object':
        return Object.fromEntries(Object.entries(binding.fields).map(([key, item]) => [key, fill(item)]));
      case 'json':
        return JSON.stringify(fill(binding.value));
    }
  };
  return plan.map((statement) => statement.bindings.map(fill));
}
