// `migrate [--status | --check]`: applies pending migrations (and new or changed database functions) to
// DATABASE_URL or the embedded database, logging each one; with --status, lists every migration and
// whether it is applied, changing nothing; --check does the same and exits 2 while any is pending, so
// it can gate a deploy. Exits 1 when the database cannot be reached or migrated.
import { openDatabase } from '../database/open.js';
import { migrationStatus, withMigrationConnection } from '../database/migrate.js';
import { createLogger } from '../logger.js';
import { parse, UsageError } from './args.js';
import { configOrExit, reported, wantsHelp } from './command.js';

const USAGE = `Usage: voice-call-api migrate [--status | --check] [--json]

  (no option)   apply pending migrations and database functions, then exit
  --status      list every migration and database function with when it was applied, and
                the job engine's schema (pg-boss) when it is behind; change nothing
  --check       as --status, but exit with status 2 while anything is pending

Exit status: 0 done (or up to date), 1 the database could not be reached or migrated,
2 (--check only) migrations are pending.
`;

/** The exit status of --check while migrations are pending. */
const PENDING_EXIT_CODE = 2;

/** The migrate command. */
export async function migrate(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  return reported(USAGE, async () => {
    const { values, positionals } = parse(argv, { status: { type: 'boolean' }, check: { type: 'boolean' } });
    if (positionals.length > 0) throw new UsageError(`migrate takes no arguments, got "${positionals.join(' ')}"`);
    if (values.status && values.check) throw new UsageError('use --status or --check, not both');
    if (values.json && !values.status && !values.check) throw new UsageError('--json goes with --status or --check');
    const listOnly = Boolean(values.status || values.check);
    const config = configOrExit();
    const logger = createLogger(config.logLevel);
    const database = await openDatabase(config, { migrations: listOnly ? 'ignore' : 'apply', logger });
    try {
      if (!listOnly) {
        process.stdout.write('Database schema is up to date.\n');
        return 0;
      }
      const timeouts = {
        statementTimeoutMs: config.migrationStatementTimeoutMs,
        lockTimeoutMs: config.migrationLockTimeoutMs,
      };
      const status = await withMigrationConnection(database.url, timeouts, migrationStatus);
      const pending = status.filter((migration) => !migration.appliedAt).length;
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
        process.stdout.write(pending === 0 ? 'Up to date.\n' : `${pending} pending.\n`);
      }
      return values.check && pending > 0 ? PENDING_EXIT_CODE : 0;
    } finally {
      await database.close();
    }
  });
}
