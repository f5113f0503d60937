// The database an operator command works on, opened only when the command first needs it.
import { loadConfig } from '../../config.js';
import type { OpenDatabase } from '../../database/open.js';
import type { Database } from './command.js';

/**
 * A Database that opens DATABASE_URL (or the embedded database) on first use, applying pending
 * migrations unless MIGRATE_ON_START=false, and a close() for the end of the command. Opening throws
 * ConfigError for a bad setting and the connection's error when the database cannot be reached.
 */
export function lazyDatabase(): { database: Database; close: () => Promise<void> } {
  let opening: Promise<OpenDatabase> | null = null;
  return {
    database: async () => {
      opening ??= (async () => {
        const config = loadConfig();
        const { openDatabase, startupMigrationMode } = await import('../../database/open.js');
        return openDatabase(config, { migrations: startupMigrationMode(config) });
      })();
      return (await opening).db;
    },
    close: async () => {
      const opened = await opening?.catch(() => null);
      await opened?.close();
    },
  };
}
