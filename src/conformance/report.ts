// The human-readable report: a per-operation table, the seed, and every violation with its curl line.
import type { ConformanceReport } from './runner.js';

const pad = (text: string, width: number) => text.padEnd(width);

/** Renders the report as text lines. */
export function formatReport(report: ConformanceReport): string {
  const lines = [
    `Conformance of ${report.apiRoot} against its published spec: seed ${report.seed}, ${report.cases} generated valid requests per operation`,
    '',
  ];
  const header = ['operation', 'request', 'valid', 'invalid', 'scenario', 'statuses seen', 'violations'];
  const rows = report.tallies.map((tally) => [
    tally.operation.id,
    `${tally.operation.method} ${tally.operation.path}`,
    String(tally.cases.valid),
    String(tally.cases.invalid),
    String(tally.cases.scenario),
    [...tally.statuses].sort().join(' '),
    String(tally.violations),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  for (const row of [header, ...rows])
    lines.push(
      row
        .map((cell, column) => pad(cell, widths[column]!))
        .join('  ')
        .trimEnd(),
    );
  const total = (pick: (tally: ConformanceReport['tallies'][number]) => number) =>
    report.tallies.reduce((sum, tally) => sum + pick(tally), 0);
  const requests = total((tally) => tally.cases.valid + tally.cases.invalid + tally.cases.scenario);
  lines.push(
    '',
    `${report.tallies.length} rows, ${requests} requests, ${report.violations.length} violations (seed ${report.seed})`,
  );
  const notes = [
    ...report.notes.map((note) => `  ${note}`),
    ...report.tallies.flatMap((tally) => tally.notes.map((note) => `  ${tally.operation.id}: ${note}`)),
  ];
  if (notes.length > 0) lines.push('', 'Notes:', ...notes);
  report.violations.forEach((violation, index) => {
    lines.push(
      '',
      `${index + 1}. ${violation.operationId} [${violation.kind}] ${violation.label}`,
      ...violation.problems.map((problem) => `   - ${problem}`),
      `   answer: ${violation.status} ${violation.body}`,
      `   repeat: ${violation.curl}`,
    );
  });
  return lines.join('\n');
}
