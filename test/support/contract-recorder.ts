// Records the (operationId, status, error code) of every answer a test app sends, one JSONL file per
// test process, so a check after the suite can tell which declared statuses and codes tests produce.
import { appendFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { inject } from 'vitest';
import type { ContractRecord } from '../../scripts/contract-coverage/contract.js';
import { matchOperation } from './spec/paths.js';
import { publishedOperations } from './spec/published.js';

const API_ROOT = '/api/v1';

/** Wraps a request listener so every answer to an API operation is appended to this process's record file. */
export function recordResponses(listener: http.RequestListener): http.RequestListener {
  const file = path.join(inject('contractRecordDir'), `${process.pid}.jsonl`);
  return (request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    const operation = pathname.startsWith(`${API_ROOT}/`)
      ? matchOperation(publishedOperations, request.method ?? 'GET', pathname.slice(API_ROOT.length))
      : undefined;
    if (operation) {
      const chunks: Buffer[] = [];
      const end = response.end.bind(response) as (...args: unknown[]) => http.ServerResponse;
      response.end = ((...args: unknown[]) => {
        if (typeof args[0] === 'string' || Buffer.isBuffer(args[0])) chunks.push(Buffer.from(args[0] as string));
        return end(...args);
      }) as typeof response.end;
      response.once('finish', () => {
        let code: string | undefined;
        if (response.statusCode >= 400) {
          try {
            code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
        }
        const record: ContractRecord = {
          operationId: operation.id,
          status: response.statusCode,
          ...(code ? { code } : {}),
        };
        appendFileSync(file, `${JSON.stringify(record)}\n`);
      });
    }
    listener(request, response);
  };
}
