// Judges one exchange against the spec: declared status, body schema for that status, error envelope.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { createSpecAjv, type SpecAjv } from '../contract/ajv.js';
import { declaredHeaders, headerValue } from './headers.js';
import type { Exchange } from './http.js';
import type { SpecDocument } from './spec/document.js';
import type { Operation } from './spec/operations.js';

/** What a case expects: a 2xx, any declared answer, or one error with its code and (when known) param. */
export type Expectation =
  { kind: 'success' } | { kind: 'declared' } | { kind: 'error'; status: number; code: string; param?: string };

const SPEC_ID = 'conformance-spec';

/** Compiles and caches validators for schemas inside the spec, addressed by JSON pointer. */
export class SchemaJudge {
  private readonly ajv: SpecAjv = createSpecAjv();
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(private readonly document: SpecDocument) {
    this.ajv.addSchema(document, SPEC_ID);
  }

  /** A required response header missing, or a declared one whose value breaks its schema, for this status. */
  headerProblems(operation: Operation, exchange: Exchange): string[] {
    const problems: string[] = [];
    for (const header of declaredHeaders(this.document, operation.method, operation.path, String(exchange.status))) {
      const text = exchange.headers.get(header.name);
      if (text === null) {
        if (header.required)
          problems.push(`the required header ${header.name} is missing from the ${exchange.status} answer`);
        continue;
      }
      for (const message of this.errors(header.pointer, headerValue(header, text)))
        problems.push(`header ${header.name}: ${JSON.stringify(text)} does not match its schema: ${message}`);
    }
    return problems;
  }

  /** The validator for the schema at `pointer` (e.g. /components/schemas/Call). */
  validator(pointer: string): ValidateFunction {
    let validate = this.cache.get(pointer);
    if (!validate) {
      const fragment = pointer.split('/').map(encodeURIComponent).join('/');
      validate = this.ajv.compile({ $ref: `${SPEC_ID}#${fragment}` });
      this.cache.set(pointer, validate);
    }
    return validate;
  }

  /** Ajv's errors for `value` against the schema at `pointer`, as short sentences; empty when valid. */
  errors(pointer: string, value: unknown): string[] {
    const validate = this.validator(pointer);
    if (validate(value)) return [];
    return (validate.errors ?? [])
      .slice(0, 5)
      .map((error) => `${error.instancePath || '(root)'} ${error.message ?? error.keyword}`);
  }

  /** Every problem with the exchange as an answer to `operation` under `expectation`; empty when conformant. */
  judge(operation: Operation, exchange: Exchange, expectation: Expectation): string[] {
    const problems: string[] = [];
    const status = String(exchange.status);
    if (exchange.status >= 500 && !(expectation.kind === 'error' && expectation.status === exchange.status)) {
      problems.push(`server error ${status}`);
    }
    if (expectation.kind === 'success' && (exchange.status < 200 || exchange.status > 299)) {
      problems.push(`expected a 2xx answer, got ${status}`);
    }
    if (expectation.kind === 'error') {
      const error = (exchange.json as { error?: { code?: unknown; param?: unknown } } | undefined)?.error;
      if (exchange.status !== expectation.status) problems.push(`expected status ${expectation.status}, got ${status}`);
      if (error?.code !== expectation.code)
        problems.push(`expected error.code ${expectation.code}, got ${JSON.stringify(error?.code)}`);
      if (expectation.param !== undefined && error?.param !== expectation.param) {
        problems.push(`expected error.param ${JSON.stringify(expectation.param)}, got ${JSON.stringify(error?.param)}`);
      }
    }
    if (!(status in operation.responses)) {
      problems.push(
        `status ${status} is not declared for ${operation.id} (declared: ${Object.keys(operation.responses).join(', ')})`,
      );
      return problems;
    }
    problems.push(...this.headerProblems(operation, exchange));
    const pointer = operation.responses[status];
    if (!pointer) {
      if (exchange.text !== '')
        problems.push(`status ${status} declares no body, got ${JSON.stringify(exchange.text.slice(0, 80))}`);
      return problems;
    }
    if (!/^application\/json\b/.test(exchange.headers.get('content-type') ?? '')) {
      problems.push(
        `expected Content-Type application/json, got ${JSON.stringify(exchange.headers.get('content-type'))}`,
      );
    }
    if (exchange.json === undefined) problems.push('the body is not JSON');
    else
      problems.push(
        ...this.errors(pointer, exchange.json).map((message) => `body does not match the ${status} schema: ${message}`),
      );
    return problems;
  }
}
