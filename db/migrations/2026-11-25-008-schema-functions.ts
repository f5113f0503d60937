// The record of installed database functions: db/functions/*.sql are installed after the migrations
// (src/database/functions.ts), and a file runs again only when its content changes.
import { type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schema_functions')
    .addColumn('file', 'text', (c) => c.primaryKey())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('installed_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('schema_functions').execute();
}
