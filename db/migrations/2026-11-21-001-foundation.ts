// Foundation tables: plans, orgs, the append-only credit ledger, agents, API keys, rate-limit buckets,
// and the event outbox with webhook endpoints, deliveries and attempts.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS pgcrypto`.execute(db);

  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull().check(sql`rate_limit_per_minute > 0`))
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
  await db
    .insertInto('plans')
    .values([
      { id: 'starter', name: 'Starter', rate_limit_per_minute: 120, active: true },
      { id: 'scale', name: 'Scale', rate_limit_per_minute: 1200, active: true },
    ])
    .execute();

  await db.schema
    .createTable('orgs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan_id', 'text', (c) => c.references('plans.id'))
    .addColumn('default_from_e164', 'text')
    .addColumn('balance_paise', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`balance_paise >= 0`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('credit_ledger')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('amount_paise', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('top_up', 'hold', 'release', 'charge')`))
    .addColumn('call_id', 'uuid')
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('credit_ledger_org_idx').on('credit_ledger').columns(['org_id', 'id']).execute();
  // The ledger is append-only: rows can be added, never changed or removed.
  await sql`
    CREATE FUNCTION credit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'credit_ledger is append-only';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER credit_ledger_no_change BEFORE UPDATE OR DELETE ON credit_ledger
    FOR EACH ROW EXECUTE FUNCTION credit_ledger_append_only()`.execute(db);

  await db.schema
    .createTable('agents')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('max_duration_sec', 'integer', (c) => c.notNull())
    .addColumn('from_e164', 'text')
    .addColumn('rate_paise_per_minute', 'integer', (c) => c.notNull().check(sql`rate_paise_per_minute >= 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('agents_org_idx').on('agents').column('org_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('prefix', 'text', (c) => c.notNull().unique())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('rate_limit_buckets')
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('second', 'bigint', (c) => c.notNull())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_buckets_pk', ['org_id', 'second'])
    .execute();
  // Takes one request slot for an org if its sliding 60-second window has room. Buckets are one second
  // wide and a bucket counts while any part of it overlaps the window, so the limit is never exceeded.
  // Returns whether the request is allowed, the hits in the window (this one included when allowed)
  // and the milliseconds until the oldest counted bucket leaves the window.
  await sql`
    CREATE FUNCTION rate_limit_take(p_org uuid, p_limit integer, p_now_ms bigint)
    RETURNS TABLE (allowed boolean, used integer, reset_ms bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_second bigint := p_now_ms / 1000;
      v_used integer;
      v_oldest bigint;
      v_target integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(p_org::text, 7));
      DELETE FROM rate_limit_buckets WHERE org_id = p_org AND second < v_second - 60;
      SELECT coalesce(sum(hits), 0)::integer INTO v_used FROM rate_limit_buckets WHERE org_id = p_org;
      IF v_used < p_limit THEN
        INSERT INTO rate_limit_buckets (org_id, second, hits) VALUES (p_org, v_second, 1)
        ON CONFLICT (org_id, second) DO UPDATE SET hits = rate_limit_buckets.hits + 1;
        v_used := v_used + 1;
        SELECT min(second) INTO v_oldest FROM rate_limit_buckets WHERE org_id = p_org;
        RETURN QUERY SELECT true, v_used, greatest((v_oldest + 61) * 1000 - p_now_ms, 0);
      ELSE
        -- The earliest moment enough buckets have left the window for one more request to fit.
        v_target := v_used - p_limit + 1;
        SELECT b.second INTO v_oldest FROM (
          SELECT second, sum(hits) OVER (ORDER BY second) AS running FROM rate_limit_buckets WHERE org_id = p_org
        ) b WHERE b.running >= v_target ORDER BY b.second LIMIT 1;
        RETURN QUERY SELECT false, v_used, greatest((v_oldest + 61) * 1000 - p_now_ms, 0);
      END IF;
    END $$`.execute(db);

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('events_org_idx').on('events').columns(['org_id', 'created_at']).execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('last_delivery_at', 'timestamptz')
    .addColumn('last_delivery_status', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhooks_org_idx').on('webhooks').columns(['org_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('webhook_id', 'uuid', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status IN ('pending', 'succeeded', 'failed', 'abandoned')`),
    )
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('delivery_id', 'uuid', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'uuid', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('failure_kind', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('webhook_attempts_webhook_idx')
    .on('webhook_attempts')
    .columns(['webhook_id', 'attempted_at'])
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').column('delivery_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('The foundation migration cannot be reverted.');
}
