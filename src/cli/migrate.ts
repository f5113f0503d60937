// `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database) and exits.
import { loadConfig } from '../config.js';
import { openDatabase } from '../database/open.js';

const database = await openDatabase(loadConfig()).catch((error: unknown) => {
  console.error(`Migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
console.log('Database schema is up to date.');
await database.close();
process.exit(0);
