// `migrate [--status]`: applies pending migrations (and new or changed database functions) to
// DATABASE_URL or the embedded database, logging each one; with --status, lists every migration and
// whether it is applied, changing nothing. Exits 1 when the database cannot be reached or migrated.
import { openDatabase } from '../database/open.js';
import { migrationStatus, withMigrationConnection } from '../database/migrate.js';
import { createLogger } from '../logger.js';
import { parse, UsageError } from './args.js';
import { configOrExit, reported, wantsHelp } from './command.js';

const USAGE = `Usage: voice-call-api migrate [--status] [--json]

  (no option)   apply pending migrations and database functions, then exit
  --status      list every migration with when it was applied; change nothing
`;

/** The migrate command. */
export async function migrate(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  return reported(USAGE, async () => {
    const { values, positionals } = parse(argv, { status: { type: 'boolean' } });
    if (positionals.length > 0) throw new UsageError(`migrate takes no arguments, got "${positionals.join(' ')}"`);
    const config = configOrExit();
    const logger = createLogger(config.logLevel);
    const database = await openDatabase(config, { migrations: values.status ? 'ignore' : 'apply', logger });
    try {
      if (!values.status) {
        process.stdout.write('Database schema is up to date.\n');
        return 0;
      }
      const timeouts = {
        statementTimeoutMs: config.migrationStatementTimeoutMs,
        lockTimeoutMs: config.migrationLockTimeoutMs,
      };
      const status = await withMigrationConnection(database.url, timeouts, migrationStatus);
      if (values.json) {
        process.stdout.write(
          JSON.stringify(
            status.map((m) => ({ name: m.name, applied_at: m.appliedAt?.toISOString() ?? null })),
            null,
            2,
          ) + '\n',
        );
      } else {
        for (const migration of status) {
          process.stdout.write(
            `${migration.appliedAt ? migration.appliedAt.toISOString() : 'pending                 '}  ${migration.name}\n`,
          );
        }
        const pending = status.filter((migration) => !migration.appliedAt).length;
        process.stdout.write(pending === 0 ? 'Up to date.\n' : `${pending} pending.\n`);
      }
      return 0;
    } finally {
      await database.close();
    }
  });
}
