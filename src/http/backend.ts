// The openapi-backend instance: routes requests to typed handlers by operationId, authenticates,
// rate-limits, validates with Ajv 2020, and (optionally) checks every response against the spec.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, OpenAPIValidator, type Context, type Document, type Operation } from 'openapi-backend';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { projectFile } from '../project-files.js';
import { DomainError, invalidField } from '../errors.js';
import { findUnstorableValue } from './text-guard.js';
import { undeclaredQueryParameter, validationError } from './validation-errors.js';
import { installCompiledMatcher } from './operation-matcher.js';
import { RateLimiter } from '../orgs/rate-limiter.js';
import type { ApiKeyAuthenticator, AuthContext } from '../orgs/authenticator.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';

export const API_ROOT = '/api/v1';
const SPEC_PATH = projectFile('generated/openapi.json');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The bundled spec, loaded once. */
export const apiDocument = JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as Document;

/** What the pipeline records about a request in ctx.state. */
export interface RequestState {
  requestId: string;
  hasBody: boolean;
  operation?: Operation;
  auth?: AuthContext;
  rateLimitHeaders?: Record<string, string>;
}

/**
 * A copy of the spec for openapi-backend. Schema `examples` arrays are dropped: they are annotations,
 * and openapi-backend rewrites shared arrays into internal $refs that Ajv then rejects.
 */
function documentForRouting(): Document {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'examples' && Array.isArray(value)) continue;
      copy[key] = strip(value);
    }
    return copy;
  };
  return strip(apiDocument) as Document;
}

function headerNamesOf(operation: Operation): Map<string, string> {
  const names = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'header') names.set(parameter.name.toLowerCase(), parameter.name);
  }
  return names;
}

function queryNamesOf(operation: Operation): Set<string> {
  const names = new Set<string>();
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'query') names.add(parameter.name);
  }
  return names;
}

function pickHeaders(operation: Operation, headers: Record<string, string | string[] | undefined>) {
  const picked: Record<string, string | undefined> = {};
  for (const [lower, name] of headerNamesOf(operation)) {
    const value = headers[lower];
    picked[name] = Array.isArray(value) ? value[0] : value;
  }
  return picked;
}

/**
 * Builds and initialises the backend. Throws at start if the spec cannot be loaded. Request-time
 * failures are thrown as DomainError for the Koa error boundary to render.
 */
export async function createBackend(
  handlers: HandlerMap,
  deps: AppDeps,
  authenticator: ApiKeyAuthenticator,
): Promise<OpenAPIBackend> {
  const ajvOpts = { strict: false, allErrors: true, useDefaults: true };
  // openapi-backend's default Ajv is draft-07; the spec is JSON Schema 2020-12 (type arrays, formats).
  // Schemas are not checked against the meta-schema at start (about half of the start-up time): the
  // spec is linted (npm run lint:spec) and the generated validators are compiled from it.
  const customizeAjv = (_ajv: unknown, options: object) => {
    const ajv = new Ajv2020.default({ ...options, strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
    return ajv as never;
  };
  // Validation is switched on below, once the validators are built.
  const api = new OpenAPIBackend({
    definition: documentForRouting(),
    apiRoot: API_ROOT,
    strict: true,
    coerceTypes: true,
    validate: false,
    ajvOpts,
    customizeAjv,
  });
  // openapi-backend checks documents against the OpenAPI 3.0 schema, which rejects valid 3.1
  // documents; the spec is linted by 3.1-aware tools instead (npm run lint:spec).
  (api as unknown as { validateDefinition: () => Document }).validateDefinition = () => api.document;

  const limiter = new RateLimiter(deps.db, deps.clock);
  api.registerSecurityHandler('bearerAuth', async (_context: Context, ctx: Koa.Context) => {
    const state = ctx.state as RequestState;
    const auth = await authenticator.authenticate(ctx.get('authorization') || undefined);
    if (auth) state.auth = auth;
    return auth ?? false;
  });

  api.register({
    postRoutingHandler: (context: Context, ctx: Koa.Context) => {
      if (context.operation) (ctx.state as RequestState).operation = context.operation;
    },
    notFound: () => {
      throw new DomainError('not_found', 'No such route. See /api/v1/openapi.json for the operations.');
    },
    methodNotAllowed: (context: Context, ctx: Koa.Context) => {
      const allowed = METHODS.filter((method) => {
        try {
          return Boolean(api.router.matchOperation({ ...context.request, method }, true));
        } catch {
          return false;
        }
      }).map((method) => method.toUpperCase());
      throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; use ${allowed.join(', ')}.`, {
        headers: { Allow: allowed.join(', ') },
      });
    },
    unauthorizedHandler: () => {
      throw new DomainError(
        'unauthorized',
        'A valid API key is required in the Authorization header (Bearer svc_live_...).',
      );
    },
    // Runs after authentication and before validation: the rate limit counts every authenticated request.
    postSecurityHandler: async (_context: Context, ctx: Koa.Context) => {
      const state = ctx.state as RequestState;
      if (!state.auth) return;
      const outcome = await limiter.take(state.auth.orgId, state.auth.rateLimitPerMinute);
      state.rateLimitHeaders = outcome.headers;
    },
    validationFail: (context: Context) => {
      throw validationError(context.validation.errors ?? [], headerNamesOf(context.operation));
    },
    preOperationHandler: (context: Context, ctx: Koa.Context) => {
      const state = ctx.state as RequestState;
      if (!context.operation.requestBody && state.hasBody) {
        throw new DomainError('invalid_request', 'body: this operation takes no request body', {
          param: 'body',
          details: { body: ['this operation takes no request body'] },
        });
      }
      const undeclared = undeclaredQueryParameter(ctx.querystring, queryNamesOf(context.operation));
      if (undeclared !== null) throw invalidField(undeclared, 'is not a recognised field');
      // Valid by the schemas, but not storable as sent: U+0000, unpaired surrogates, 1e400 (the spec's conventions refuse them).
      const unstorable = state.hasBody ? findUnstorableValue(context.request.requestBody) : null;
      if (unstorable) throw invalidField(unstorable.path, unstorable.problem);
    },
  });

  for (const operationId of Object.keys(handlers) as OperationId[]) {
    const handler = handlers[operationId] as (
      input: OperationInput<OperationId>,
      deps: AppDeps,
    ) => Promise<{
      status: number;
      body: unknown;
      headers?: Record<string, string>;
    }>;
    api.register(operationId, async (context: Context, ctx: Koa.Context) => {
      const state = ctx.state as RequestState;
      const input = {
        params: context.request.params,
        query: context.request.query,
        headers: pickHeaders(context.operation, context.request.headers),
        body: context.request.requestBody,
        auth: state.auth!,
        requestId: state.requestId,
      } as unknown as OperationInput<OperationId>;
      const result = await handler(input, deps);
      if (deps.config.validateResponses) checkResponse(api, context.operation, result.status, result.body);
      ctx.status = result.status;
      if (result.body !== undefined) ctx.body = result.body;
      for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    });
  }

  await api.init();
  // Request validators are compiled now; response validators only when responses are checked
  // (openapi-backend compiles every one of them at start, used or not, for another third of it).
  api.validator = new OpenAPIValidator({
    definition: api.definition,
    ajvOpts,
    customizeAjv,
    router: api.router,
    lazyCompileValidators: true,
    coerceTypes: true,
  });
  api.validator.preCompileRequestValidators();
  if (deps.config.validateResponses) api.validator.preCompileResponseValidators();
  api.validate = true;
  // openapi-backend rebuilds its list of operations (with lodash) on every routing and lookup call,
  // about a tenth of the CPU of a cheap request; the document never changes after init.
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  installCompiledMatcher(api.router);
  return api;
}

/** Throws when a handler's response is not declared for its status or does not match its schema. */
function checkResponse(api: OpenAPIBackend, operation: Operation, status: number, body: unknown): void {
  if (!operation.responses?.[String(status)]) {
    throw new Error(`Response contract violation: ${operation.operationId} does not declare status ${status}`);
  }
  if (body === undefined) return;
  const result = api.validator.validateResponse(body, operation, status);
  if (result.errors?.length) {
    throw new Error(
      `Response contract violation in ${operation.operationId} ${status}: ${JSON.stringify(result.errors)}`,
    );
  }
}

/** Koa middleware that hands every request under /api/v1 (and anything unmatched) to the backend. */
export function backendMiddleware(api: OpenAPIBackend): Koa.Middleware {
  return async (ctx) => {
    const state = ctx.state as RequestState;
    try {
      await api.handleRequest(
        {
          method: ctx.method,
          path: ctx.path,
          query: ctx.querystring,
          headers: ctx.headers as Record<string, string | string[]>,
          body: state.hasBody ? (ctx.request as unknown as { body: unknown }).body : undefined,
        },
        ctx,
      );
    } finally {
      for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {})) ctx.set(name, value);
    }
  };
}
