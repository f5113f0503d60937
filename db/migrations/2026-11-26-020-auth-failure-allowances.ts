// Failed authentications are counted per client address in the database, so every API process draws on
// one allowance (src/orgs/auth-failure-queries.ts). Unlogged: after a crash the allowances start full,
// which costs nothing but a fresh minute of attempts.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE UNLOGGED TABLE auth_failure_allowances (
              address text PRIMARY KEY,
              tokens double precision NOT NULL,
              at_ms bigint NOT NULL
            )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE auth_failure_allowances`.execute(db);
}
