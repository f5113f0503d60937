// `contacts import`: load an org's contact book from a CSV file.
import { requiredUuid } from '../args.js';
import type { CommandGroup } from './command.js';

/** The contact commands. */
export const contactCommands: CommandGroup = {
  name: 'contacts',
  summary: "contacts: an org's contact book",
  commands: [
    {
      name: 'contacts import',
      summary: 'import contacts from a UTF-8 CSV file; rejected rows are listed by line',
      synopsis: '--org ORG_ID FILE.csv',
      flags: { org: { type: 'string', value: 'ORG_ID', help: 'the org whose contact book to fill' } },
      args: ['FILE.csv'],
      run: async ({ values, args: [file] }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const [{ requireOrg }, { importContacts }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../contacts/csv-import.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const summary = await importContacts(db, orgId, file!, (rows) => process.stderr.write(`… ${rows} rows read\n`));
        const lines = [
          `Imported ${file}: ${summary.rows} rows, ${summary.created} created, ${summary.updated} updated, ${summary.rejected} rejected.`,
          ...summary.rejections.map((rejection) => `  row ${rejection.row}: ${rejection.reasons.join('; ')}`),
        ];
        if (summary.rejected > summary.rejections.length)
          lines.push(`  … and ${summary.rejected - summary.rejections.length} more`);
        return { human: lines.join('\n'), json: summary };
      },
    },
  ],
};
