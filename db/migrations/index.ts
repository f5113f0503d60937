// The ordered list of migrations; each entry is frozen once released. Add new ones at the end.
import type { Migration } from 'kysely';
import * as foundation from './2026-11-21-001-foundation.js';
import * as contacts from './2026-11-21-004-contacts.js';
import * as calls from './2026-11-21-002-calls.js';

export const migrations: Record<string, Migration> = {
  '2026-11-21-001-foundation': foundation,
  '2026-11-21-004-contacts': contacts,
  '2026-11-21-002-calls': calls,
};
