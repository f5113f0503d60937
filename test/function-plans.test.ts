// PL/pgSQL keeps each statement's plan for the life of the connection. The rate limiter's function is
// planned on a connection's first requests, often while its table is nearly empty; once many orgs fill
// the table, it must still reach an org's buckets through the key instead of scanning every row.
// auto_explain, loaded into the test's own session, shows the plans the function's statements ran.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';

let database: TestDatabase;
let client: pg.Client;
const notices: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  client.on('notice', (notice) => notices.push(notice.message ?? ''));
});

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

/** One request slot for `org`, as the service takes it. */
function take(org: string) {
  return client.query('SELECT * FROM rate_limit_take($1, 1000, $2, 1, 0, 0, 0, 0)', [org, Date.now()]);
}

/** The plans of the statements run by `work`, as auto_explain reports them to this session. */
async function plansOf(work: () => Promise<unknown>): Promise<string> {
  await client.query("LOAD 'auto_explain'");
  await client.query('SET auto_explain.log_min_duration = 0');
  await client.query('SET auto_explain.log_nested_statements = on');
  await client.query('SET auto_explain.log_level = notice');
  notices.length = 0;
  try {
    await work();
  } finally {
    await client.query('SET auto_explain.log_min_duration = -1');
  }
  return notices.join('\n');
}

describe('rate_limit_take on a connection that planned it while its table was empty', () => {
  it('reaches the org buckets by key once the table holds many orgs', async () => {
    const org = randomUUID();
    // Statistics that say the table is empty, and a connection whose cached plans were made then.
    await client.query('ANALYZE rate_limit_buckets');
    for (let i = 0; i < 8; i += 1) await take(org);
    // Thousands of other orgs' buckets arrive before the next ANALYZE.
    await client.query(
      'INSERT INTO rate_limit_buckets (org_id, second, hits, last_ms) SELECT gen_random_uuid(), s, 1, $1 FROM generate_series(1, 20000) s',
      [Date.now()],
    );

    const plans = await plansOf(() => take(org));

    expect(plans).toContain('FROM rate_limit_buckets WHERE org_id = p_org');
    expect(plans).not.toContain('Seq Scan');
    const [row] = (await take(org)).rows as Array<{ granted: number; used: number }>;
    expect(row).toMatchObject({ granted: 1, used: 10 });
  });
});
