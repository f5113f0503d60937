// Real voice providers: each agent names its provider and that provider's settings (existing agents
// keep the simulator); a placement waits in call_placements between its two transactions (hidden from
// the API, its hold reserved on the org's balance); provider_events keeps every provider report once,
// under its unique key, with the call it was applied to or held for.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('agents')
    .addColumn('provider', 'text', (c) => c.notNull().defaultTo('simulator'))
    .addColumn('provider_settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();

  await db.schema
    .createTable('call_placements')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id'))
    // pending: the provider has been (or is being) asked; unknown: its answer never came.
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state IN ('pending', 'unknown')`))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_settings', 'jsonb', (c) => c.notNull())
    .addColumn('from_e164', 'text', (c) => c.notNull())
    .addColumn('to_e164', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('max_duration_sec', 'integer', (c) => c.notNull())
    .addColumn('rate_paise_per_minute', 'integer', (c) => c.notNull())
    .addColumn('hold_paise', 'bigint', (c) => c.notNull().check(sql`hold_paise >= 0`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    // When the placement must be looked up at the provider if no process has finished it by then.
    .addColumn('recover_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX call_placements_recover_idx ON call_placements (recover_at)`.execute(db);

  await db.schema
    .createTable('provider_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('call_id', 'uuid')
    .addColumn('provider_call_id', 'text')
    .addColumn('event', 'jsonb', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    // Null while the event waits for its call (between the placement's two transactions, or unknown).
    .addColumn('applied_at', 'timestamptz')
    .addUniqueConstraint('provider_events_key', ['provider', 'dedupe_key'])
    .execute();
  await sql`CREATE INDEX provider_events_waiting_call_idx ON provider_events (call_id)
            WHERE applied_at IS NULL AND call_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX provider_events_waiting_provider_call_idx ON provider_events (provider, provider_call_id)
            WHERE applied_at IS NULL AND provider_call_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX provider_events_received_idx ON provider_events (received_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_events').execute();
  await db.schema.dropTable('call_placements').execute();
  await db.schema.alterTable('agents').dropColumn('provider_settings').dropColumn('provider').execute();
}
