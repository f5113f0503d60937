// Input meant to hurt a server rather than to break one schema rule: SQL, text PostgreSQL cannot store,
// look-alike characters and deep nesting.

/** Strings that would change a query if they were ever spliced into SQL. */
export const SQL_INJECTION = [
  "' OR '1'='1",
  "'; DROP TABLE calls; --",
  '1 UNION SELECT secret FROM webhooks --',
  '$$; DELETE FROM orgs; $$',
];

/** Text PostgreSQL cannot store as sent, with what is wrong with each. */
export const UNSTORABLE_TEXT: Array<[string, string]> = [
  ['a NUL character', 'a\u0000b'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', 'a\udc00b'],
  ['a reversed surrogate pair', '\ude00\ud83d'],
];

/** JSON nested `depth` levels deep, as arrays or as objects (each with the one member `a`). */
export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** The text with its printable ASCII characters swapped for their full-width look-alikes. */
export function fullWidth(value: string): string {
  return value.replace(/[\x21-\x7e]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
}
