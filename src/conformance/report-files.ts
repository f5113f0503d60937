// The machine-readable reports: JSON (the whole report) and JUnit XML (one test case per operation
// that passed, one failing test case per violation) for CI systems.
import type { ConformanceReport } from './runner.js';

/** The report as a JSON document: per-operation counts, notes, and each violation with its curl line. */
export function jsonReport(report: ConformanceReport): string {
  return `${JSON.stringify(
    {
      apiRoot: report.apiRoot,
      seed: report.seed,
      cases: report.cases,
      interrupted: report.interrupted,
      operations: report.tallies.map((tally) => ({
        id: tally.operation.id,
        method: tally.operation.method,
        path: tally.operation.path,
        cases: tally.cases,
        statuses: [...tally.statuses].sort(),
        violations: tally.violations,
        notes: tally.notes,
      })),
      notes: report.notes,
      violations: report.violations,
    },
    null,
    2,
  )}\n`;
}

const escapeXml = (text: string) =>
  text
    // XML 1.0 cannot carry most control characters, even escaped.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** The report as JUnit XML: a suite of the operations, each violation a failing case with its curl line. */
export function junitReport(report: ConformanceReport): string {
  const cases: string[] = [];
  for (const tally of report.tallies) {
    const name = `${tally.operation.id} ${tally.operation.method} ${tally.operation.path}`;
    if (tally.violations === 0) cases.push(`    <testcase classname="conformance" name="${escapeXml(name)}"/>`);
  }
  for (const violation of report.violations) {
    const name = `${violation.operationId} [${violation.kind}] ${violation.label}`;
    const detail = [
      ...violation.problems.map((problem) => `- ${problem}`),
      `answer: ${violation.status} ${violation.body}`,
      `repeat: ${violation.curl}`,
    ].join('\n');
    cases.push(
      `    <testcase classname="conformance" name="${escapeXml(name)}">`,
      `      <failure message="${escapeXml(violation.problems[0] ?? 'violation')}" type="violation">${escapeXml(detail)}</failure>`,
      '    </testcase>',
    );
  }
  const notes = [
    ...report.notes,
    ...report.tallies.flatMap((tally) => tally.notes.map((note) => `${tally.operation.id}: ${note}`)),
  ];
  const tests = cases.filter((line) => line.trimStart().startsWith('<testcase')).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="conformance" tests="${tests}" failures="${report.violations.length}">`,
    `  <testsuite name="conformance of ${escapeXml(report.apiRoot)} (seed ${report.seed})" tests="${tests}" failures="${report.violations.length}">`,
    ...cases,
    ...(notes.length > 0 ? [`    <system-out>${escapeXml(notes.join('\n'))}</system-out>`] : []),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
