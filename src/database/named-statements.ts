// Server-side prepared statements for the queries every request runs. PostgreSQL parses a named
// statement once per connection and, once its plan cache has settled, stops planning it too: about
// half of the database's CPU for a single-row read. Statements are registered by prepareQuery (their
// SQL is fixed); any other SQL goes out unnamed, as before. The connection (./pg-connection.ts) runs a
// registered statement with pg's query config `{ name, text, values }`.

/** Names of the registered statements, by their SQL text (the same text always gets the same name). */
const names = new Map<string, string>();

/** Registers `sql` as a statement to run by name; registering it again changes nothing. */
export function registerNamedStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `vc_${names.size + 1}`);
}

/** The name `sql` runs under, or undefined when it is not registered. */
export function namedStatementOf(sql: string): string | undefined {
  return names.get(sql);
}
