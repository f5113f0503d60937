// A campaign contact's last_call_id names its current attempt's placement from the moment the attempt is
// recorded, so that the call's ending can be matched to it. A placement the provider refused, or one
// voided because the provider never took it, never becomes a call, and the contact went on naming an id
// that GET /calls/{id} does not know. The contact now remembers the call it named before
// (previous_call_id), and such an attempt puts that one back.
//
// Contacts written before this migration are repaired once: a contact no longer being called whose
// last_call_id names neither a call nor a placement names its latest call again (or none), and a
// contact being called remembers its latest call before the current one.
import { sql, type Kysely } from 'kysely';

/** The contact's latest call in its campaign other than `except`, as SQL. */
const latestCall = (except: string) =>
  sql.raw(`(SELECT c.id FROM calls c
    WHERE c.campaign_id = cc.campaign_id AND c.campaign_contact_id = cc.contact_id AND c.id <> ${except}
    ORDER BY c.created_at DESC, c.id DESC LIMIT 1)`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE campaign_contacts ADD COLUMN previous_call_id uuid`.execute(db);
  await sql`
    UPDATE campaign_contacts cc SET last_call_id = ${latestCall('cc.last_call_id')}
    WHERE cc.state <> 'calling' AND cc.last_call_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = cc.last_call_id)
      AND NOT EXISTS (SELECT 1 FROM call_placements p WHERE p.id = cc.last_call_id)`.execute(db);
  await sql`
    UPDATE campaign_contacts cc SET previous_call_id = ${latestCall('cc.last_call_id')}
    WHERE cc.state = 'calling' AND cc.attempts > 1 AND cc.last_call_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE campaign_contacts DROP COLUMN previous_call_id`.execute(db);
}
