// The handler map and the spec match one to one, and every error status the spec declares has a code.
import { describe, expect, it } from 'vitest';
import { handlers } from '../src/http/handler-map.js';
import { STATUS_BY_CODE } from '../src/http/errors.js';
import { declaredCodes, errorCodeTable } from '../scripts/contract-coverage/contract.js';
import { resolve } from '../src/conformance/spec/document.js';
import { publishedOperations as operations, publishedSpec as document } from './support/spec/published.js';

describe('contract coverage', () => {
  it('has a handler for every operation and an operation for every handler', () => {
    expect(Object.keys(handlers).sort()).toEqual(operations.map((operation) => operation.id).sort());
  });

  it('documents every error code with the status the server answers it with', () => {
    const enumCodes = resolve<{ enum: string[] }>(document, { $ref: '#/components/schemas/ErrorCode' }).enum;
    expect(Object.fromEntries(errorCodeTable(document))).toEqual(STATUS_BY_CODE);
    expect(enumCodes.sort()).toEqual(Object.keys(STATUS_BY_CODE).sort());
  });

  it('gives every declared error status of every operation at least one code', () => {
    for (const operation of operations) {
      for (const group of declaredCodes(operation, errorCodeTable(document))) {
        expect(group.codes.length, `${operation.id} ${group.status}`).toBeGreaterThan(0);
      }
    }
  });
});
