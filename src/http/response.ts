// Writes a handler's result to the response, after checking it against the spec for its operation and
// status when responses are validated (always in tests).
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import type Koa from 'koa';

/** What a handler returns. */
export interface HandlerOutput {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Throws when a response's status is not declared for its operation, or its body breaks the schema. */
function checkResponse(api: OpenAPIBackend, operation: Operation, output: HandlerOutput): void {
  if (!operation.responses?.[String(output.status)]) {
    throw new Error(`Response contract violation: ${operation.operationId} does not declare status ${output.status}`);
  }
  if (output.body === undefined) return;
  const result = api.validateResponse(output.body, operation, output.status);
  if (result.errors?.length) {
    throw new Error(
      `Response contract violation in ${operation.operationId} ${output.status}: ${JSON.stringify(result.errors)}`,
    );
  }
}

/**
 * The writer of an operation handler's output to the Koa response; with `validate`, a response that
 * breaks the contract (checked by `api`) throws: a loud internal error.
 */
export function writeResponse(api: OpenAPIBackend, validate: boolean) {
  return (operation: Operation, output: HandlerOutput, ctx: Koa.Context): void => {
    if (validate) checkResponse(api, operation, output);
    ctx.status = output.status;
    if (output.body !== undefined) ctx.body = output.body;
    if (output.headers) ctx.set(output.headers);
  };
}
