// `npm run contract:coverage`: after `npm test`, checks that the suite produced every status and error
// code the spec declares for every operation, and that handlers and operations match one to one.
import { readFileSync } from 'node:fs';
import { handlers } from '../../src/http/handler-map.js';
import { publishedOperations as operations, publishedSpec as document } from '../../test/support/spec/published.js';
import { contractCoverage, errorCodeTable, type ContractRecord } from './contract.js';

const recordsPath = process.argv[2] ?? 'coverage/contract-records.jsonl';
let records: ContractRecord[];
try {
  records = readFileSync(recordsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ContractRecord);
} catch {
  console.error(`no records at ${recordsPath}: run the whole suite first (npm test)`);
  process.exit(2);
}

const operationIds = new Set(operations.map((operation) => operation.id));
const handlerIds = new Set(Object.keys(handlers));
const withoutHandler = [...operationIds].filter((id) => !handlerIds.has(id));
const withoutOperation = [...handlerIds].filter((id) => !operationIds.has(id));
const coverage = contractCoverage(operations, errorCodeTable(document), records);

console.log(
  `operations: ${operationIds.size} in the spec, ${operationIds.size - withoutHandler.length} with a handler; ${handlerIds.size} handlers, ${withoutOperation.length} without an operation`,
);
console.log(
  `statuses: ${coverage.statuses.produced}/${coverage.statuses.declared} declared (operation, status) pairs produced by the tests`,
);
console.log(
  `error codes: ${coverage.codes.reached}/${coverage.codes.declared} declared (operation, code) pairs reached by the tests`,
);
console.log(`answers recorded: ${records.length}; with an undeclared status: ${coverage.undeclared.length}`);
const problems = [
  ...withoutHandler.map((id) => `operation without a handler: ${id}`),
  ...withoutOperation.map((id) => `handler without an operation: ${id}`),
  ...coverage.statuses.missing.map((pair) => `status never produced: ${pair}`),
  ...coverage.codes.missing.map((pair) => `error code never reached: ${pair}`),
  ...coverage.undeclared.map((pair) => `undeclared status produced: ${pair}`),
];
for (const problem of problems) console.log(`  ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);
