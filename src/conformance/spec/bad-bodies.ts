// Bodies to send with one bad value each (see bad-values.ts): the valid body to vary, and that body as JSON
// text with a bad value put in its place.
import { REMOVE, type BadValue } from './bad-values.js';

/** A valid value to vary: `value`, its missing or null members taken from the first of `examples` that has each. */
export function withExampleMembers(value: unknown, examples: readonly unknown[]): unknown {
  const present = Object.entries(value && typeof value === 'object' ? value : {}).filter(
    ([, member]) => member !== null,
  );
  return Object.assign({}, ...[...examples].reverse(), Object.fromEntries(present));
}

const MARK = '@@bad-value@@';

function setAt(root: unknown, at: string[], member: unknown): Record<string, unknown> {
  const copy = { ...(root && typeof root === 'object' && !Array.isArray(root) ? root : {}) } as Record<string, unknown>;
  const [head, ...rest] = at as [string, ...string[]];
  if (rest.length > 0) copy[head] = setAt(copy[head], rest, member);
  else if (member === REMOVE) delete copy[head];
  else copy[head] = member;
  return copy;
}

/** The JSON text of `root` with the bad value in its place (or its member left out). */
export function withBadValue(root: unknown, bad: BadValue): string {
  const json = bad.json;
  if (json === REMOVE) return JSON.stringify(setAt(root, bad.at, REMOVE));
  if (bad.at.length === 0) return json;
  return JSON.stringify(setAt(root, bad.at, MARK)).replace(JSON.stringify(MARK), () => json);
}
