// Queries written with Kysely's builder (or its sql template) but built and compiled once: on the hot
// paths, building and compiling a query took more of the API's CPU than parsing its rows. The first run
// compiles the query with a marker in place of each argument; every run then puts its arguments where
// the markers are. An argument must be one value of the SQL: an array is one in an sql template, but a
// list given to the builder (`in`) is not. The compiled SQL is also registered as a named statement
// (./named-statements.ts), so pools that name statements prepare it once per connection on the server.
import type { Compilable, CompiledQuery, QueryResult, RawBuilder } from 'kysely';
import type { Db } from './connect.js';
import { StaleStatementError } from './driver-errors.js';
import { registerNamedStatement } from './named-statements.js';

/** Stands for a named argument in the compiled parameter list. */
class Marker {
  constructor(readonly name: string) {}
}

/** What a prepared query's builder gets: `arg(name)` stands for that argument wherever a value goes. */
export type Arg<Args> = <K extends keyof Args & string>(name: K) => Args[K];

/** What a prepared query's builder makes: a query builder, or an sql`...` template. */
type Buildable<Row> = Compilable<Row> | RawBuilder<Row>;

/** A query compiled on its first run; later runs only bind their arguments. */
export interface PreparedQuery<Args, Row> {
  /**
   * Runs the query on `db` (a pool or a transaction) with `args` and returns its rows. Outside a
   * transaction, a named statement gone stale (a migration changed its result columns) is run once
   * more, unnamed on that connection; other database errors propagate.
   */
  execute(db: Db, args: Args): Promise<Row[]>;
  /** Like execute, with the whole result (the number of affected rows included). */
  run(db: Db, args: Args): Promise<QueryResult<Row>>;
}

/**
 * Prepares the query `build` makes (annotate its `arg` as `Arg<{ ...arguments }>`). Its first run throws
 * when the builder put an argument somewhere that did not become a parameter of the compiled SQL.
 */
export function prepareQuery<Args extends Record<string, unknown>, Row>(
  build: (db: Db, arg: Arg<Args>) => Buildable<Row>,
): PreparedQuery<Args, Row> {
  let template: CompiledQuery<Row> | null = null;
  const run = async (db: Db, args: Args) => {
    if (!template) {
      template = compile(db, build);
      registerNamedStatement(template.sql);
    }
    const parameters = template.parameters.map((value) => (value instanceof Marker ? args[value.name] : value));
    const query = { ...template, parameters };
    try {
      return await db.executeQuery<Row>(query);
    } catch (error) {
      // The connection that refused the stale statement now runs it unnamed (see pg-connection.ts).
      if (db.isTransaction || !(error instanceof StaleStatementError)) throw error;
      return db.executeQuery<Row>(query);
    }
  };
  return { run, execute: async (db, args) => (await run(db, args)).rows };
}

function compile<Args, Row>(db: Db, build: (db: Db, arg: Arg<Args>) => Buildable<Row>): CompiledQuery<Row> {
  const used = new Set<string>();
  const built = build(db, (name) => {
    used.add(name);
    return new Marker(name) as never;
  });
  const query = 'isRawBuilder' in built ? built.compile(db) : built.compile();
  const bound = new Set(query.parameters.filter((value) => value instanceof Marker).map((marker) => marker.name));
  for (const name of used) {
    if (!bound.has(name)) throw new Error(`prepared query: argument ${name} did not become a query parameter`);
  }
  return query;
}
