// The members feature's clean-up, as the retention job runs it: sessions past their end or idle too
// long, links past their 72 hours and failed sign-ins older than the throttle's window go; live ones stay.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg } from './support/app.js';
import { acceptLink, findLink, inviteMember } from '../src/members/service.js';
import { loadSession, pruneDashboardState, startSession } from '../src/members/sessions.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

const LIFETIMES = { idleMs: 60 * 60 * 1000, absoluteMs: 24 * 60 * 60 * 1000 };
const CLI = { actor: 'cli', address: null };

describe('pruning the members state', () => {
  it('removes ended sessions, expired links and old failed sign-ins, and keeps the live ones', async () => {
    const { db } = database;
    const org = await createTestOrg(db);
    const now = new Date();
    const { token: usedLink } = await inviteMember(
      db,
      { orgId: org.orgId, email: 'old@example.com', role: 'admin' },
      CLI,
    );
    const user = await acceptLink(db, usedLink, 'quartz meadow violin ember 17', now);
    const idle = await startSession(db, user, LIFETIMES, now, null);
    const live = await startSession(db, user, LIFETIMES, now, null);
    const { token: staleLink } = await inviteMember(
      db,
      { orgId: org.orgId, email: 'late@example.com', role: 'viewer' },
      CLI,
    );
    const { token: freshLink } = await inviteMember(
      db,
      { orgId: org.orgId, email: 'new@example.com', role: 'viewer' },
      CLI,
    );
    await db
      .insertInto('dashboard_sign_in_failures')
      .values([
        { subject: 'address:192.0.2.1', at: new Date(now.getTime() - 16 * 60 * 1000) },
        { subject: 'address:192.0.2.1', at: now },
      ])
      .execute();
    // One session unused past the idle timeout, one link (with the used one) past its end.
    await sql`UPDATE dashboard_sessions SET last_seen_at = now() - interval '2 hours'
              WHERE id_hash = ${idle.session.idHash}`.execute(db);
    const staleHash = (await findLink(db, staleLink, now))!.token_hash;
    await sql`UPDATE dashboard_links SET expires_at = now() - interval '1 minute'
              WHERE token_hash = ${staleHash} OR used_at IS NOT NULL`.execute(db);

    // The idle session, the two ended links and the old failure.
    expect(await pruneDashboardState(db, LIFETIMES, new Date())).toBe(4);

    expect(await loadSession(db, idle.token, LIFETIMES)).toBeNull();
    expect(await loadSession(db, live.token, LIFETIMES)).toMatchObject({ userId: user.id });
    expect(await findLink(db, freshLink)).toMatchObject({ email: 'new@example.com' });
    const links = await db.selectFrom('dashboard_links').select('token_hash').execute();
    expect(links).toHaveLength(1);
    const failures = await db.selectFrom('dashboard_sign_in_failures').select('at').execute();
    expect(failures).toEqual([{ at: now }]);
    expect(await pruneDashboardState(db, LIFETIMES, new Date())).toBe(0);
  });
});
