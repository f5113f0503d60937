// A record of each CSV contact import: who runs it, how far its committed batches got, and how it ended.
// At most one import per org runs at a time (a partial unique index); a running import whose heartbeat
// stops (its process died) is ended as failed by the next import of that org.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contact_imports')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source IN ('dashboard', 'cli')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('running', 'done', 'failed')`))
    .addColumn('rows_committed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_line_committed', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejections', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('reason', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('heartbeat_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`CREATE UNIQUE INDEX contact_imports_one_running ON contact_imports (org_id) WHERE status = 'running'`.execute(
    db,
  );
  await db.schema
    .createIndex('contact_imports_org_started')
    .on('contact_imports')
    .columns(['org_id', 'started_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contact_imports').execute();
}
