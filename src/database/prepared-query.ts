// Queries written with Kysely's builder but built and compiled once: on the hottest reads, building and
// compiling a query took more of the API's CPU than parsing its rows. The first run compiles the builder
// with a marker in place of each argument; every run then puts its arguments where the markers are.
// Only scalar arguments can be markers (a list would compile to one placeholder per element).
import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './connect.js';

/** Stands for a named argument in the compiled parameter list. */
class Marker {
  constructor(readonly name: string) {}
}

/** What a prepared query's builder gets: `arg(name)` stands for that argument wherever a value goes. */
export type Arg<Args> = <K extends keyof Args & string>(name: K) => Args[K];

/** A query compiled on its first run; later runs only bind their arguments. */
export interface PreparedQuery<Args, Row> {
  /** Runs the query on `db` (a pool or a transaction) with `args`; database errors propagate. */
  execute(db: Db, args: Args): Promise<Row[]>;
}

/**
 * Prepares the query `build` makes (annotate its `arg` as `Arg<{ ...arguments }>`). Its first run throws
 * when the builder put an argument somewhere that did not become a parameter of the compiled SQL.
 */
export function prepareQuery<Args extends Record<string, unknown>, Row>(
  build: (db: Db, arg: Arg<Args>) => Compilable<Row>,
): PreparedQuery<Args, Row> {
  let template: CompiledQuery<Row> | null = null;
  return {
    async execute(db, args) {
      if (!template) template = compile(db, build);
      const parameters = template.parameters.map((value) => (value instanceof Marker ? args[value.name] : value));
      return (await db.executeQuery<Row>({ ...template, parameters })).rows;
    },
  };
}

function compile<Args, Row>(db: Db, build: (db: Db, arg: Arg<Args>) => Compilable<Row>): CompiledQuery<Row> {
  const used = new Set<string>();
  const query = build(db, (name) => {
    used.add(name);
    return new Marker(name) as never;
  }).compile();
  const bound = new Set(query.parameters.filter((value) => value instanceof Marker).map((marker) => marker.name));
  for (const name of used) {
    if (!bound.has(name)) throw new Error(`prepared query: argument ${name} did not become a query parameter`);
  }
  return query;
}
