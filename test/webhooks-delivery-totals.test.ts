// The totals of an endpoint's delivery log while the clean-up after a switch-off marks dropped rows:
// the pending total is the triggers' counts less the rows the cut dropped, and both must be read at one
// moment. A clean-up batch that commits between the two reads would otherwise show its rows as pending
// again. The batch here holds the deliveries table until the API's request waits for it, then commits:
// read apart, the counts were read before the commit and the dropped rows after it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abandonDroppedDeliveries } from '../src/webhooks/delivery-queries.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { seedBacklog, storedStatuses } from './support/backlog.js';
import { waitFor } from './support/calls.js';
import { blocksAnother, createTestDatabase, type TestDatabase } from './support/database.js';

const BACKLOG = 10;

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // No workers: only the API's own clean-up after its answer runs, and the test waits for it.
  app = await startTestApp(database, { workers: false });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('GET /webhooks/{id}/deliveries totals after a switch-off', () => {
  it('never count a clean-up batch that commits meanwhile as pending', async () => {
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const { id } = await database.db
      .insertInto('webhooks')
      .values({
        org_id: org.orgId,
        url: 'https://hooks.example.com/in',
        events: ['contact.created'],
        secret: 'whsec_t',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await seedBacklog(database.db, org.orgId, id, BACKLOG)).toBe(BACKLOG);
    const off = await client.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: false } });
    expect(off.response.status).toBe(200);
    // The API marks the dropped rows right after its answer; once it has, they are put back as the
    // switch-off left them (pending in storage, below the cut), for the batch below to mark.
    await waitFor(
      'the clean-up after the answer',
      async () => (await storedStatuses(database.db, id)).pending === undefined,
    );
    await sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() WHERE webhook_id = ${id}`.execute(
      database.db,
    );
    const total = async (status: 'pending' | 'abandoned') => {
      const { data } = await client.GET('/webhooks/{id}/deliveries', {
        params: { path: { id }, query: { limit: 1, status } },
      });
      return data!.pagination.total;
    };
    expect(await total('pending')).toBe(0);

    let pending: Promise<number> | undefined;
    await database.db.transaction().execute(async (trx) => {
      // A batch of the clean-up itself: the dropped rows marked, the triggers' counts moved with them.
      expect((await abandonDroppedDeliveries(trx, id, '0', BACKLOG)).count).toBe(BACKLOG);
      await sql`LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`.execute(trx);
      pending = total('pending');
      await waitFor('the request to wait for the clean-up batch', () => blocksAnother(trx));
    });

    expect(await pending).toBe(0);
    expect(await total('abandoned')).toBe(BACKLOG);
  });
});
