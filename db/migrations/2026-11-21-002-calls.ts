// Calls: the call rows (with their progress schedule), their timelines, per-org per-status counters
// that keep list totals O(1), and the Idempotency-Key records of POST /calls.
import { sql, type Kysely } from 'kysely';

const STATUSES = `'queued', 'dialing', 'ringing', 'in_progress', 'completed', 'failed', 'no_answer', 'busy', 'canceled'`;
const TERMINAL = `'completed', 'failed', 'no_answer', 'busy', 'canceled'`;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('calls')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('agent_id', 'uuid', (c) => c.notNull().references('agents.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql.raw(`status IN (${STATUSES})`)))
    .addColumn('from_e164', 'text', (c) => c.notNull())
    .addColumn('to_e164', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('max_duration_sec', 'integer', (c) => c.notNull().check(sql`max_duration_sec > 0`))
    .addColumn('rate_paise_per_minute', 'integer', (c) => c.notNull().check(sql`rate_paise_per_minute >= 0`))
    .addColumn('hold_paise', 'bigint', (c) => c.notNull().check(sql`hold_paise >= 0`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_call_id', 'text', (c) => c.notNull())
    // How many provider events have been applied, and when the call must next be looked at (null once ended).
    .addColumn('progress_cursor', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_step_at', 'timestamptz')
    .addColumn('duration_sec', 'integer', (c) => c.check(sql`duration_sec >= 0`))
    .addColumn('credits_debited_paise', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('recording_url', 'text')
    .addColumn('llm_extracted_intent', 'text')
    .addColumn('llm_sentiment', 'text')
    .addColumn('llm_outcome', 'text')
    .addColumn('reason', 'text')
    .addColumn('transcript', 'jsonb')
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('calls_charge_within_hold', sql`credits_debited_paise BETWEEN 0 AND hold_paise`)
    // An ended call has an end time and is never scheduled again; a call in flight has neither.
    .addCheckConstraint(
      'calls_terminal_consistent',
      sql.raw(
        `(status IN (${TERMINAL})) = (ended_at IS NOT NULL) AND (status NOT IN (${TERMINAL}) OR next_step_at IS NULL)`,
      ),
    )
    .execute();
  await sql`CREATE INDEX calls_org_created_idx ON calls (org_id, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX calls_org_status_created_idx ON calls (org_id, status, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX calls_due_idx ON calls (next_step_at) WHERE next_step_at IS NOT NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX calls_provider_call_idx ON calls (provider, provider_call_id)`.execute(db);

  await db.schema
    .createTable('call_timeline')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('call_id', 'uuid', (c) => c.notNull().references('calls.id'))
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('kind', 'text', (c) =>
      c.notNull().check(sql`kind IN ('status-changed', 'disclosure-played', 'intent-detected', 'handoff-requested')`),
    )
    .addColumn('detail', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('call_timeline_call_idx').on('call_timeline').columns(['call_id', 'at', 'id']).execute();

  await db.schema
    .createTable('call_status_counts')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql.raw(`status IN (${STATUSES})`)))
    .addColumn('count', 'bigint', (c) => c.notNull().check(sql`count >= 0`))
    .addPrimaryKeyConstraint('call_status_counts_pk', ['org_id', 'status'])
    .execute();

  await db.schema
    .createTable('call_idempotency_keys')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('call_id', 'uuid', (c) => c.references('calls.id'))
    .addColumn('response', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('call_idempotency_keys_pk', ['org_id', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('call_idempotency_keys').execute();
  await db.schema.dropTable('call_status_counts').execute();
  await db.schema.dropTable('call_timeline').execute();
  await db.schema.dropTable('calls').execute();
}
