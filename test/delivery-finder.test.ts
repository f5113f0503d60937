// The worker's search for due deliveries takes orgs in turns however large a backlog is: an org with
// thousands of due deliveries does not hide another org's newer one, and each endpoint gives at most
// its share of the oldest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDueDeliveries } from '../src/webhooks/delivery-queries.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { endpointWithEvents } from './support/webhook-env.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

describe('finding due deliveries', () => {
  it("puts a quiet org's newest delivery beside a 6,000-delivery backlog, in the first turn", async () => {
    const noisy = await endpointWithEvents(database.db, 6_000);
    const quiet = await endpointWithEvents(database.db, 1);
    const due = await findDueDeliveries(database.db, new Date(Date.now() + 1_000), {
      perEndpoint: 4,
      perOrg: 96,
      limit: 2,
      skipEndpoints: [],
      skipOrgs: [],
    });
    // The first turn is each org's oldest: one of the noisy org's and the quiet org's only one.
    expect(due.map((row) => row.org_id).sort()).toEqual([noisy.orgId, quiet.orgId].sort());

    const more = await findDueDeliveries(database.db, new Date(Date.now() + 1_000), {
      perEndpoint: 4,
      perOrg: 96,
      limit: 100,
      skipEndpoints: [quiet.webhookId],
      skipOrgs: [],
    });
    // At most its share per endpoint, and none of a skipped endpoint.
    expect(more).toHaveLength(4);
    expect(more.every((row) => row.webhook_id === noisy.webhookId)).toBe(true);
  });
});
