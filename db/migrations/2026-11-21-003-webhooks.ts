// Webhook delivery ordering: an insertion sequence on deliveries and attempts, so "newest first" and
// "keep the last 100 attempts" are exact even when many rows share one timestamp.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY`.execute(db);
  await sql`ALTER TABLE webhook_attempts ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_webhook_idx').execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook_seq_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'seq'])
    .execute();
  await db.schema.dropIndex('webhook_attempts_webhook_idx').execute();
  await db.schema
    .createIndex('webhook_attempts_webhook_seq_idx')
    .on('webhook_attempts')
    .columns(['webhook_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_attempts_webhook_seq_idx').execute();
  await db.schema.dropIndex('webhook_deliveries_webhook_seq_idx').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('seq').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('seq').execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('webhook_attempts_webhook_idx')
    .on('webhook_attempts')
    .columns(['webhook_id', 'attempted_at'])
    .execute();
}
