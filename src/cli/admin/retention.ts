// `retention run`: the retention job once, now, or as a dry run that removes nothing.
import type { CommandGroup } from './command.js';
import { table } from './table.js';

/** The retention command (a group of one). */
export const retentionCommands: CommandGroup = {
  name: 'retention',
  summary: 'retention: removing history past its retention period',
  commands: [
    {
      name: 'retention run',
      summary: 'run the retention job once now, and print the rows it removed by table',
      notes:
        'The same rules as the worker role applies every RETENTION_INTERVAL_MS. When another process is running them, nothing is done and the command says so.',
      synopsis: '[--dry-run]',
      flags: { 'dry-run': { type: 'boolean', help: 'count the rows a run would remove now; remove nothing' } },
      run: async ({ values }, database) => {
        const [{ loadConfig }, { runRetention }] = await Promise.all([
          import('../../config.js'),
          import('../../maintenance/retention.js'),
        ]);
        const dryRun = values['dry-run'] === true;
        const report = await runRetention(
          { db: await database(), clock: { now: () => new Date() }, config: loadConfig() },
          { dryRun },
        );
        if (!report) {
          return {
            human: 'Another process is running the retention job now; nothing was done.',
            json: { ran: false, dry_run: dryRun, removed: null },
          };
        }
        const verb = dryRun ? 'would remove' : 'removed';
        return {
          human: `${table(
            ['TABLE', 'ROWS'],
            Object.entries(report).map(([name, count]) => [name, String(count)]),
            '',
          )}\nA run now ${verb} ${Object.values(report).reduce((sum, count) => sum + count, 0)} row(s).`,
          json: { ran: true, dry_run: dryRun, removed: report },
        };
      },
    },
  ],
};
