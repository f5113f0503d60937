// The one place `any` names a database schema: migrations and the function installer run against tables
// the app's types do not describe yet, which is how Kysely's migration docs type them.
import type { Kysely } from 'kysely';

/** A Kysely handle over whatever schema the database has at the time (migrations, their runner). */
export type AnySchemaDb = Kysely<any>;
