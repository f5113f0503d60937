// What the spec declares per operation (statuses and error codes) and how much of it recorded answers reach.
import type { SpecDocument } from '../../src/conformance/spec/document.js';
import type { Operation } from '../../src/conformance/spec/operations.js';

/** One answer a test app sent (see test/support/contract-recorder.ts). */
export interface ContractRecord {
  operationId: string;
  status: number;
  code?: string;
}

/** The error-code table of the spec's introduction (`| \`code\` | status | meaning |`): code -> HTTP status. */
export function errorCodeTable(document: SpecDocument): Map<string, number> {
  const description = String((document.info as { description?: string } | undefined)?.description ?? '');
  return new Map(
    [...description.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map((match) => [match[1]!, Number(match[2])]),
  );
}

/**
 * The error codes an operation declares, grouped by status: the codes whose status it declares. Where
 * several codes share a status (409), the ones its description names; all of them when it names none
 * (then any one of them counts as reached).
 */
export function declaredCodes(
  operation: Operation,
  table: Map<string, number>,
): Array<{ status: number; codes: string[]; anyOf: boolean }> {
  const groups: Array<{ status: number; codes: string[]; anyOf: boolean }> = [];
  for (const status of Object.keys(operation.responses)
    .map(Number)
    .filter((status) => status >= 400)) {
    const codes = [...table].filter(([, codeStatus]) => codeStatus === status).map(([code]) => code);
    const named = codes.filter((code) => operation.description.includes(code));
    if (codes.length === 1 || named.length === 0) groups.push({ status, codes, anyOf: codes.length > 1 });
    else groups.push({ status, codes: named, anyOf: false });
  }
  return groups;
}

/** The coverage of the declared contract by recorded answers, with what is missing. */
export interface ContractCoverage {
  statuses: { declared: number; produced: number; missing: string[] };
  codes: { declared: number; reached: number; missing: string[] };
  undeclared: string[];
}

/** Compares recorded answers with every operation's declared statuses and error codes. */
export function contractCoverage(
  operations: readonly Operation[],
  table: Map<string, number>,
  records: readonly ContractRecord[],
): ContractCoverage {
  const seen = new Set(records.map((record) => `${record.operationId} ${record.status}`));
  const reached = new Set(
    records.filter((record) => record.code).map((record) => `${record.operationId} ${record.code}`),
  );
  const coverage: ContractCoverage = {
    statuses: { declared: 0, produced: 0, missing: [] },
    codes: { declared: 0, reached: 0, missing: [] },
    undeclared: [],
  };
  for (const operation of operations) {
    for (const status of Object.keys(operation.responses)) {
      coverage.statuses.declared += 1;
      if (seen.has(`${operation.id} ${status}`)) coverage.statuses.produced += 1;
      else coverage.statuses.missing.push(`${operation.id} ${status}`);
    }
    for (const group of declaredCodes(operation, table)) {
      const hits = group.codes.filter((code) => reached.has(`${operation.id} ${code}`));
      coverage.codes.declared += group.anyOf ? 1 : group.codes.length;
      coverage.codes.reached += group.anyOf ? Math.min(hits.length, 1) : hits.length;
      const label = group.anyOf ? `one of ${group.codes.join('/')}` : null;
      if (group.anyOf && hits.length === 0) coverage.codes.missing.push(`${operation.id} ${group.status} ${label}`);
      if (!group.anyOf)
        for (const code of group.codes.filter((code) => !hits.includes(code)))
          coverage.codes.missing.push(`${operation.id} ${group.status} ${code}`);
    }
  }
  const known = new Map(operations.map((operation) => [operation.id, operation]));
  for (const key of new Set(records.map((record) => `${record.operationId} ${record.status}`))) {
    const [id, status] = key.split(' ');
    if (!(status! in (known.get(id!)?.responses ?? {}))) coverage.undeclared.push(key);
  }
  return coverage;
}
