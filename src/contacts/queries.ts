// SQL for contacts: the atomic upsert, batch import statements and the newest-first list.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg, type PreparedQuery } from '../database/prepared-query.js';
import type { ContactsTable } from '../../db/schema.js';
import { countRows, readPageAndTotal, type PageStart } from '../database/keyset.js';

export type ConsentCapture = ContactsTable['consent_capture'];
type ContactMetadata = Record<string, string | number | boolean>;

/** The fields of an upsert; `undefined` means "keep what is stored", `null` clears. */
export interface ContactFields {
  name?: string | null;
  email?: string | null;
  language_pref?: string | null;
  metadata?: ContactMetadata;
  consent_capture?: ConsentCapture;
}

const UPDATABLE = ['name', 'email', 'language_pref', 'metadata', 'consent_capture'] as const;
type Updatable = (typeof UPDATABLE)[number];

/** The columns `fields` sets, in a fixed order, and their values as stored (metadata as JSON text). */
function columnValues(fields: ContactFields) {
  const columns: Updatable[] = [];
  const values: Partial<Record<Updatable, unknown>> = {};
  for (const column of UPDATABLE) {
    const value = fields[column];
    if (value === undefined) continue;
    columns.push(column);
    values[column] = column === 'metadata' ? JSON.stringify(value) : value;
  }
  return { columns, values };
}

/** Every column, named: prepared statements never return `*` (see database/named-statements.ts). */
const CONTACT_COLUMNS = [
  'id',
  'org_id',
  'phone_e164',
  'name',
  'email',
  'language_pref',
  'metadata',
  'consent_capture',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ContactsTable)[];

type ContactArgs = { orgId: string; phone: string } & Partial<Record<Updatable, unknown>>;

/** Prepared statements for each set of columns a request sets (at most 32), made on first use. */
function byColumns<Row>(build: (columns: Updatable[]) => PreparedQuery<ContactArgs, Row>) {
  const prepared = new Map<string, PreparedQuery<ContactArgs, Row>>();
  return (columns: Updatable[]) => {
    const key = columns.join(',');
    let query = prepared.get(key);
    if (!query) prepared.set(key, (query = build(columns)));
    return query;
  };
}

const upsertStatement = byColumns((columns) =>
  prepareQuery((db, arg: Arg<ContactArgs>) =>
    db
      .insertInto('contacts')
      .values({
        org_id: arg('orgId'),
        phone_e164: arg('phone'),
        ...Object.fromEntries(columns.map((column) => [column, arg(column)])),
      } as never)
      .onConflict((conflict) =>
        conflict.columns(['org_id', 'phone_e164']).doUpdateSet((eb) => {
          const set: Record<string, unknown> = { updated_at: sql`clock_timestamp()` };
          for (const column of columns) set[column] = eb.ref(`excluded.${column}` as never);
          return set;
        }),
      )
      .returning(CONTACT_COLUMNS)
      .returning(sql<boolean>`(xmax = 0)`.as('inserted')),
  ),
);

const updateStatement = byColumns((columns) =>
  prepareQuery((db, arg: Arg<ContactArgs>) =>
    db
      .updateTable('contacts')
      .set({
        ...Object.fromEntries(columns.map((column) => [column, arg(column)])),
        updated_at: sql`clock_timestamp()`,
      } as never)
      .where('org_id', '=', arg('orgId'))
      .where('phone_e164', '=', arg('phone'))
      .returning(CONTACT_COLUMNS),
  ),
);

/**
 * Creates the contact or updates the provided fields of the existing one, in one statement.
 * `consent_capture` must be given (a new row needs it). Returns the row and whether it was inserted.
 */
export async function upsertContactRow(db: Db, orgId: string, phone: string, fields: ContactFields) {
  const { columns, values } = columnValues(fields);
  const [row] = await upsertStatement(columns).execute(db, { orgId, phone, ...values });
  return row!;
}

/** Updates the provided fields of an existing contact; undefined when the org has no such number. */
export async function updateContactRow(db: Db, orgId: string, phone: string, fields: ContactFields) {
  const { columns, values } = columnValues(fields);
  const [row] = await updateStatement(columns).execute(db, { orgId, phone, ...values });
  return row;
}

/** One validated CSV row; empty cells are null and keep the stored value on update. */
export interface ImportRow {
  phone_e164: string;
  name: string | null;
  email: string | null;
  language_pref: string | null;
  metadata: ContactMetadata | null;
  consent_capture: ConsentCapture | null;
}

/** Inserts the batch's new numbers (consent defaulting to `imported`); returns the inserted rows. */
export async function insertNewContacts(db: Db, orgId: string, rows: ImportRow[]) {
  if (rows.length === 0) return [];
  const { rows: inserted } = await sql<{
    id: string;
    phone_e164: string;
    name: string | null;
    consent_capture: ConsentCapture;
  }>`
    INSERT INTO contacts (org_id, phone_e164, name, email, language_pref, metadata, consent_capture)
    SELECT ${orgId}::uuid, r.phone, r.name, r.email, r.lang, coalesce(r.meta, '{}'::jsonb), coalesce(r.consent, 'imported')
    FROM unnest(${rows.map((r) => r.phone_e164)}::text[], ${rows.map((r) => r.name)}::text[],
                ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.language_pref)}::text[],
                ${rows.map((r) => (r.metadata ? JSON.stringify(r.metadata) : null))}::jsonb[],
                ${rows.map((r) => r.consent_capture)}::text[])
      AS r(phone, name, email, lang, meta, consent)
    ON CONFLICT (org_id, phone_e164) DO NOTHING
    RETURNING id, phone_e164, name, consent_capture`.execute(db);
  return inserted;
}

/** Applies the non-empty cells of the batch's rows to existing contacts; returns how many changed. */
export async function updateExistingContacts(db: Db, orgId: string, rows: ImportRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await sql`
    UPDATE contacts c SET
      name = coalesce(r.name, c.name),
      email = coalesce(r.email, c.email),
      language_pref = coalesce(r.lang, c.language_pref),
      metadata = coalesce(r.meta, c.metadata),
      consent_capture = coalesce(r.consent, c.consent_capture),
      updated_at = clock_timestamp()
    FROM unnest(${rows.map((r) => r.phone_e164)}::text[], ${rows.map((r) => r.name)}::text[],
                ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.language_pref)}::text[],
                ${rows.map((r) => (r.metadata ? JSON.stringify(r.metadata) : null))}::jsonb[],
                ${rows.map((r) => r.consent_capture)}::text[])
      AS r(phone, name, email, lang, meta, consent)
    WHERE c.org_id = ${orgId}::uuid AND c.phone_e164 = r.phone`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The org's contact with this id, or undefined (also for another org's contact). */
export async function findContactRow(db: Db, orgId: string, id: string) {
  return db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** The org's contacts whose id is one of `ids` or whose number is one of `phones`: id and number of each. */
export function findContactKeys(db: Db, orgId: string, ids: readonly string[], phones: readonly string[]) {
  return db
    .selectFrom('contacts')
    .select(['id', 'phone_e164'])
    .where('org_id', '=', orgId)
    .where((eb) =>
      eb.or([
        eb('id', '=', eb.fn.any(sql<string[]>`${ids}::uuid[]`)),
        eb('phone_e164', '=', eb.fn.any(sql<string[]>`${phones}::text[]`)),
      ]),
    )
    .execute();
}

/**
 * Up to `limit` + 1 of an org's contacts from `offset`, newest first (ties by id): a page and whether
 * another follows, without counting the whole list (the dashboard's pages, which must stay fast for
 * orgs with hundreds of thousands of contacts).
 */
export function browseContactRows(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number; consent?: ConsentCapture },
) {
  return db
    .selectFrom('contacts')
    .selectAll()
    .where('org_id', '=', orgId)
    .$if(page.consent !== undefined, (qb) => qb.where('consent_capture', '=', page.consent!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
}

/**
 * One page of an org's contacts, newest first (ties by id), with the total matching count; `more` tells
 * whether a cursor page has more beyond it (no contact passes an unknown cursor).
 */
export async function listContactRows(
  db: Db,
  orgId: string,
  page: { limit: number; consent?: ConsentCapture } & PageStart,
) {
  let matching = db.selectFrom('contacts').where('org_id', '=', orgId);
  if (page.consent) matching = matching.where('consent_capture', '=', page.consent);
  return readPageAndTotal(
    { rows: matching.selectAll(), table: 'contacts', columns: ['created_at', 'id'] },
    () => countRows(matching),
    { limit: page.limit, start: page },
  );
}
