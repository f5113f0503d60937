// `contacts import`: load an org's contact book from a CSV file.
import { MODE_FLAG, modeOption, requiredUuid } from '../args.js';
import type { RowError } from '../../contacts/csv-rows.js';
import type { CommandGroup } from './command.js';
import { typedPath } from '../invocation.js';

/** A rejected row for people: its line, the API's message, then the other fields' messages from the details. */
function describeRejection({ line, error }: { line: number; error: RowError }): string {
  const messages = Object.entries(error.details ?? {}).flatMap(([field, list]) =>
    list.map((text) => `${field}: ${text}`),
  );
  return `  line ${line}: ${[error.message, ...messages.filter((text) => text !== error.message)].join('; ')}`;
}

/** The contact commands. */
export const contactCommands: CommandGroup = {
  name: 'contacts',
  summary: "contacts: an org's contact book",
  commands: [
    {
      name: 'contacts import',
      summary: 'import contacts from a UTF-8 CSV file; rejected rows are listed by line',
      notes: `Columns: phone_e164 (required), name, email, language_pref, consent_capture, metadata (a JSON object).
An empty cell keeps the stored value; a new number without consent_capture is recorded as imported.
Each row is checked as POST /contacts checks a body. A row the API would refuse is skipped and listed
with its line number and the API's error (code, param, message; with --json the whole error object).
A phone number that repeats an earlier line is skipped too and listed as "+91... repeats line N":
the first row of a number is the one imported. The other rows are committed 1,000 rows at a time, each
batch with its contact.created events, so the import never holds a database connection for long.
A file that is not UTF-8, is empty, has an unknown column, a line over 1 MiB or broken CSV quoting is
refused as a whole, before anything is written. The file is read in constant memory.
One import per org and mode runs at a time (dashboard or CLI): while another runs, this one is refused at once.
If an import fails part-way, the batches already committed stay stored and the message says through
which line; import the same file again to finish: stored numbers are matched and counted as updated,
and no contact.created event is sent twice.
Exit status: 0 when every row was imported, 1 when any row was rejected (the others are imported).`,
      synopsis: '--org ORG_ID [--mode live|test] FILE.csv',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org whose contact book to fill' },
        mode: MODE_FLAG,
      },
      args: ['FILE.csv'],
      run: async ({ values, args: [file] }, database) => {
        const liveOrgId = requiredUuid(values, 'org', 'an org id');
        const mode = modeOption(values);
        const [{ requireOrg }, { importContacts }, { cliLogger }, { orgForMode }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../contacts/csv-import.js'),
          import('./logger.js'),
          import('../../orgs/modes.js'),
        ]);
        const db = await database();
        await requireOrg(db, liveOrgId);
        const orgId = await orgForMode(db, liveOrgId, mode);
        // The command prints the outcome itself (a refusal as its one error line): the import's info lines
        // would repeat it on stderr, so only its warnings and errors are logged here.
        const base = cliLogger();
        const logger = base.levelVal >= base.levels.values.warn! ? base : base.child({}, { level: 'warn' });
        const summary = await importContacts({ db, logger }, orgId, typedPath(file!), {
          source: 'cli',
          onProgress: (rows) => process.stderr.write(`… ${rows} rows read\n`),
        });
        const lines = [
          `Imported ${file}: ${summary.rows} rows, ${summary.created} created, ${summary.updated} updated, ${summary.rejected} rejected.`,
          ...summary.rejections.map(describeRejection),
        ];
        if (summary.rejected > summary.rejections.length)
          lines.push(`  … and ${summary.rejected - summary.rejections.length} more`);
        return { human: lines.join('\n'), json: summary, status: summary.rejected > 0 ? 1 : 0 };
      },
    },
  ],
};
