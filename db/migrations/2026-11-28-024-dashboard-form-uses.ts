// The dashboard's one-time forms (a new API key, a new endpoint, a rotated secret, a reset link: each
// shows a secret once) carry a nonce, used once per session: sent again (a reload, a second click), the
// form is refused instead of making a second key or rotating a second time. The nonces go with their
// session.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_form_uses')
    .addColumn('session_id_hash', 'text', (c) =>
      c.notNull().references('dashboard_sessions.id_hash').onDelete('cascade'),
    )
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('dashboard_form_uses_pkey', ['session_id_hash', 'nonce'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_form_uses').execute();
}
