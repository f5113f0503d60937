// Checksums of every table, to prove requests changed nothing (or nothing of one org). Tables are
// found in the catalogue, so a table added later is covered without a change here.
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';

/** Row count and a digest of the rows, per table. */
export type Snapshot = Record<string, { rows: number; digest: string }>;

/**
 * Tables that count requests by design, bad ones included: the rate-limit window (every authenticated
 * request) and the allowance of failed authentications (every request with a wrong key).
 */
const COUNTS_REQUESTS = /^(rate_limit_|auth_failure_)/;

/** Columns that record use rather than state: a key's last use is noted by any request made with it. */
const USE_COLUMNS = new Set(['api_keys.last_used_at']);

/** A WHERE clause limiting `table` to one org's rows, found through the columns it has. */
function orgFilter(table: string, columns: Set<string>, orgId: string) {
  if (table === 'orgs') return sql`id = ${orgId}::uuid`;
  if (columns.has('org_id')) return sql`org_id = ${orgId}::uuid`;
  if (columns.has('call_id')) return sql`call_id IN (SELECT id FROM calls WHERE org_id = ${orgId}::uuid)`;
  if (columns.has('webhook_id')) return sql`webhook_id IN (SELECT id FROM webhooks WHERE org_id = ${orgId}::uuid)`;
  return sql`true`; // shared tables (plans, migrations) count for every org
}

/** Checksums of every table (all rows, or only `orgId`'s), except the rate-limit window. */
export async function snapshotTables(db: Db, orgId?: string): Promise<Snapshot> {
  const { rows: columns } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name IN (
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE')`.execute(
    db,
  );
  const tables = new Map<string, Set<string>>();
  for (const { table_name: table, column_name: column } of columns) {
    if (COUNTS_REQUESTS.test(table) || USE_COLUMNS.has(`${table}.${column}`)) continue;
    (tables.get(table) ?? tables.set(table, new Set()).get(table)!).add(column);
  }
  const snapshot: Snapshot = {};
  for (const [table, names] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
    const where = orgId ? orgFilter(table, names, orgId) : sql`true`;
    const row = sql`ROW(${sql.join([...names].sort().map((name) => sql.ref(`t.${name}`)))})::text`;
    const { rows } = await sql<{ rows: number; digest: string }>`
      SELECT count(*)::int AS rows, md5(coalesce(string_agg(${row}, E'\n' ORDER BY ${row}), '')) AS digest
      FROM ${sql.table(table)} AS t WHERE ${where}`.execute(db);
    snapshot[table] = rows[0]!;
  }
  return snapshot;
}
