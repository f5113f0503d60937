// The demo org's dashboard admin, made on the first start of an embedded database so the banner can
// print a one-time link that leads straight into the dashboard.
import type { Db } from '../database/connect.js';
import { CLI_ACTOR } from '../audit/service.js';
import { inviteMember, linkPath } from './service.js';

/** The demo admin's email address. */
export const DEMO_ADMIN_EMAIL = 'admin@demo.example';

/** Invites the demo admin into the org and returns the path of their one-time link. */
export async function inviteDemoAdmin(db: Db, orgId: string): Promise<string> {
  const { token } = await inviteMember(
    db,
    { orgId, email: DEMO_ADMIN_EMAIL, role: 'admin' },
    { actor: CLI_ACTOR, address: null },
  );
  return linkPath(token);
}
