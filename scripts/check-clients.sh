#!/usr/bin/env bash
# Generates clients from the published document (generated/openapi.json, what `npm run gen` serves)
# with eleven generators (openapi-typescript + openapi-fetch, @hey-api/openapi-ts, orval,
# swagger-typescript-api, kubb, openapi-zod-client, typed-openapi, oazapfts, @rtk-query/codegen-openapi,
# openapi-client-axios typegen, openapi-typescript-codegen), then type-checks each one together with a
# small usage sample (tsc --noEmit, strict); any failure exits non-zero. The newer samples place a
# call, page through calls and read an error body with its Retry-After. Every sample whose generator
# emits the event types also switches on a webhook body's `event` and reads a field only that kind
# has (onDelivery), which compiles only when the generator kept WebhookEvent a discriminated union.
# Runs offline; output goes to .clients/ (gitignored, rebuilt on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/node_modules/.bin"
spec="$PWD/generated/openapi.json"
out=.clients
rm -rf "$out"
clients=(openapi-fetch hey-api orval swagger-typescript-api kubb zod-client typed-openapi oazapfts rtk-query openapi-client-axios openapi-typescript-codegen)
for client in "${clients[@]}"; do mkdir -p "$out/$client"; done
printf '{ "private": true, "type": "module" }\n' >"$out/package.json"

# The same strict settings for every client; DOM supplies fetch, Headers and RequestInit.
tsconfig='{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "lib": ["ES2022", "DOM", "DOM.Iterable"],
    "types": [],
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["**/*.ts"]
}'
for client in "${clients[@]}"; do printf '%s\n' "$tsconfig" >"$out/$client/tsconfig.json"; done

AGENT=3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b
failed=()

check() { # check NAME: type-checks $out/NAME and records a failure instead of stopping
  local name=$1 started=$SECONDS
  if "$bin/tsc" -p "$out/$name/tsconfig.json"; then
    echo "ok   $name ($((SECONDS - started)) s)"
  else
    echo "FAIL $name: tsc reported errors" >&2
    failed+=("$name")
  fi
}

on_delivery() { # on_delivery TYPE [open]: prints the narrowing sample for the webhook union type TYPE
  cat <<EOF

// duration_sec exists only on call.completed, phone_e164 only on contact.created.
export function onDelivery(body: $1): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}
EOF
  # "open": the generator lets an object carry unknown fields, so reading another kind's field compiles.
  [ "${2:-}" = open ] && return
  cat <<EOF

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: $1): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
}

echo "== (a) openapi-typescript $("$bin/openapi-typescript" --version 2>/dev/null | tr -d '\n') + openapi-fetch"
"$bin/openapi-typescript" "$spec" --output "$out/openapi-fetch/openapi.ts" --silent
cat >"$out/openapi-fetch/usage.ts" <<EOF
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000/api/v1' });

export async function usage(): Promise<string | undefined> {
  const created = await client.POST('/calls', { body: { agent_id: '$AGENT', to_e164: '+919812345678' } });
  if (created.error) return created.error.error.code;
  const listed = await client.GET('/calls', { params: { query: { limit: 10, status: 'completed' } } });
  const detail = await client.GET('/calls/{id}', { params: { path: { id: created.data.data.id } } });
  return listed.data?.data[0]?.id ?? detail.data?.data.status;
}

type WebhookEvent = components['schemas']['WebhookEvent'];

// duration_sec exists only on call.completed, phone_e164 only on contact.created.
export function onDelivery(body: WebhookEvent): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: WebhookEvent): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
check openapi-fetch

echo "== (b) @hey-api/openapi-ts $("$bin/openapi-ts" --version)"
# An absolute path: a bare relative one such as spec/openapi.yaml is read as an "organization/project" registry shorthand.
"$bin/openapi-ts" --input "$spec" --output "$out/hey-api/client" --client @hey-api/client-fetch --no-log-file
cat >"$out/hey-api/usage.ts" <<EOF
import { createCall, getCall, listCalls, type WebhookEvent } from './client/index.js';
import { client } from './client/client.gen.js';

client.setConfig({ baseUrl: 'http://127.0.0.1:3000/api/v1' });

export async function usage(): Promise<string | undefined> {
  const created = await createCall({ body: { agent_id: '$AGENT', to_e164: '+919812345678' } });
  if (created.error) return created.error.error.code;
  if (!created.data) return undefined;
  const listed = await listCalls({ query: { limit: 10, status: 'completed' } });
  const detail = await getCall({ path: { id: created.data.data.id } });
  return listed.data?.data[0]?.id ?? detail.data?.data.status;
}

export function onDelivery(body: WebhookEvent): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: WebhookEvent): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
check hey-api

echo "== (c) orval $("$bin/orval" --version)"
"$bin/orval" --input "$spec" --output "$out/orval/client.ts" --client fetch --mode single
cat >"$out/orval/usage.ts" <<EOF
import { createCall, getCall, listCalls, type WebhookEvent } from './client.js';

export async function usage(): Promise<string | undefined> {
  const created = await createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
  if (created.status !== 201) return created.data.error.code;
  const listed = await listCalls({ limit: 10, status: 'completed' });
  const detail = await getCall(created.data.data.id);
  if (listed.status === 200) return listed.data.data[0]?.id;
  return detail.status === 200 ? detail.data.data.status : undefined;
}

export function onDelivery(body: WebhookEvent): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: WebhookEvent): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
check orval

echo "== (d) swagger-typescript-api $("$bin/swagger-typescript-api" --version 2>/dev/null | tr -d '\n')"
# Its fetch client is the default; version 13.13.0 reads any --http-client value as axios.
"$bin/swagger-typescript-api" generate --path "$spec" --output "$out/swagger-typescript-api" --name api.ts \
  --enum-style union --silent
cat >"$out/swagger-typescript-api/usage.ts" <<EOF
import { Api, type WebhookEvent } from './api.js';

const api = new Api({ baseUrl: 'http://127.0.0.1:3000/api/v1' });

export async function usage(): Promise<string | undefined> {
  const created = await api.calls.createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
  const listed = await api.calls.listCalls({ limit: 10, status: 'completed' });
  const detail = await api.calls.getCall(created.data.data.id);
  return listed.data.data[0]?.id ?? detail.data.data.status;
}

export function onDelivery(body: WebhookEvent): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: WebhookEvent): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
check swagger-typescript-api

echo "== (e) kubb $("$bin/kubb" --version 2>/dev/null | tr -d '\n') (@kubb/plugin-oas + @kubb/plugin-ts)"
# kubb reads a config file: written beside its output, naming the spec by absolute path.
cat >"$out/kubb/kubb.config.ts" <<EOF
import { defineConfig } from '@kubb/core';
import { pluginOas } from '@kubb/plugin-oas';
import { pluginTs } from '@kubb/plugin-ts';

export default defineConfig({
  root: '.',
  input: { path: '$spec' },
  output: { path: './gen', clean: true },
  plugins: [pluginOas({ validate: false }), pluginTs({ output: { path: 'types' }, enumType: 'literal' })],
});
EOF
(cd "$out/kubb" && "$bin/kubb" generate --config kubb.config.ts >/dev/null)
cat >"$out/kubb/usage.ts" <<EOF
import type { CallCreate, ListCallsQueryParams, WebhookEvent } from './gen/index.js';

export const request: CallCreate = { agent_id: '$AGENT', to_e164: '+919812345678' };
export const query: ListCallsQueryParams = { limit: 10, status: 'completed' };

export function onDelivery(body: WebhookEvent): string {
  switch (body.event) {
    case 'call.completed':
      return body.data.status + ' after ' + String(body.data.duration_sec) + ' s';
    case 'contact.created':
      return body.data.phone_e164;
    default:
      return body.event;
  }
}

// Fails to compile if the union were loose (any, or data not tied to event).
export function narrowed(body: WebhookEvent): unknown {
  if (body.event !== 'contact.created') return undefined;
  // @ts-expect-error duration_sec belongs to call.completed only
  return body.data.duration_sec;
}
EOF
check kubb

echo "== (f) openapi-zod-client $(node -p 'require("./node_modules/openapi-zod-client/package.json").version') (zodios client, zod schemas)"
"$bin/openapi-zod-client" "$spec" --output "$out/zod-client/client.ts" --export-schemas >/dev/null
{
  cat <<EOF
import { isErrorFromAlias } from '@zodios/core';
import type { z } from 'zod';
import { createApiClient, schemas } from './client.js';

const client = createApiClient('http://127.0.0.1:3000/api/v1');

export async function usage(): Promise<string | undefined> {
  try {
    const created = await client.createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
    const ids: string[] = [];
    for (let offset = 0; ; ) {
      const page = await client.listCalls({ queries: { limit: 10, offset, status: 'completed' } });
      ids.push(...page.data.map((call) => call.id));
      if (!page.pagination.has_more) break;
      offset += page.data.length;
    }
    return ids[0] ?? created.data.status;
  } catch (error) {
    if (!isErrorFromAlias(client.api, 'createCall', error)) throw error;
    const retryAfter: unknown = error.response.headers['retry-after'];
    return error.response.data.error.code + ' retry after ' + String(retryAfter);
  }
}

type WebhookEvent = z.infer<typeof schemas.WebhookEvent>;
EOF
  # Its objects are .passthrough() (payloads may grow), so data has an index signature of unknown:
  # onDelivery still needs the narrowing (phone_e164 is a string only on contact.created).
  on_delivery WebhookEvent open
} >"$out/zod-client/usage.ts"
check zod-client

echo "== (g) typed-openapi $(node -p 'require("./node_modules/typed-openapi/package.json").version')"
# It writes --output relative to the working directory, so it runs inside its folder.
(cd "$out/typed-openapi" && "$bin/typed-openapi" "$spec" --output api.ts >/dev/null)
{
  cat <<EOF
import { createApiClient, type Schemas } from './api.js';

const client = createApiClient(
  {
    fetch: ({ method, url, parameters }) =>
      fetch(url, { method, body: parameters?.body === undefined ? undefined : JSON.stringify(parameters.body) }),
  },
  'http://127.0.0.1:3000/api/v1',
);

export async function usage(): Promise<string | undefined> {
  const created = await client.post('/calls', {
    header: {},
    body: { agent_id: '$AGENT', to_e164: '+919812345678' },
    withResponse: true,
  });
  if (!created.ok) {
    const retryAfter = created.status === 429 ? created.headers.get('Retry-After') : null;
    return created.data.error.code + ' retry after ' + String(retryAfter);
  }
  const ids: string[] = [];
  for (let offset = 0; ; ) {
    const page = await client.get('/calls', { query: { limit: 10, offset, status: 'completed' } });
    ids.push(...page.data.map((call) => call.id));
    if (!page.pagination.has_more) break;
    offset += page.data.length;
  }
  return ids[0] ?? created.data.data.status;
}
EOF
  on_delivery Schemas.WebhookEvent
} >"$out/typed-openapi/usage.ts"
check typed-openapi

echo "== (h) oazapfts $(node -p 'require("./node_modules/oazapfts/package.json").version') (--allSchemas)"
# --allSchemas: WebhookEvent is referenced by no operation, and oazapfts emits only referenced schemas by default.
"$bin/oazapfts" "$spec" "$out/oazapfts/api.ts" --allSchemas >/dev/null
{
  cat <<EOF
import { createCall, defaults, listCalls, type WebhookEvent } from './api.js';

defaults.baseUrl = 'http://127.0.0.1:3000/api/v1';

export async function usage(): Promise<string | undefined> {
  const created = await createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
  if (created.status !== 201) {
    return created.data.error.code + ' retry after ' + String(created.headers.get('Retry-After'));
  }
  const ids: string[] = [];
  for (let offset = 0; ; ) {
    const page = await listCalls({ limit: 10, offset, status: 'completed' });
    if (page.status !== 200) return page.data.error.code;
    ids.push(...page.data.data.map((call) => call.id));
    if (!page.data.pagination.has_more) break;
    offset += page.data.data.length;
  }
  return ids[0] ?? created.data.data.status;
}
EOF
  on_delivery WebhookEvent
} >"$out/oazapfts/usage.ts"
check oazapfts

echo "== (i) @rtk-query/codegen-openapi $(node -p 'require("./node_modules/@rtk-query/codegen-openapi/package.json").version') (@reduxjs/toolkit/query)"
# Its config names the empty API it injects endpoints into; paths are relative to the working directory.
cat >"$out/rtk-query/openapi-config.json" <<EOF
{
  "schemaFile": "$spec",
  "apiFile": "./emptyApi.ts",
  "apiImport": "emptyApi",
  "outputFile": "./api.ts",
  "exportName": "voiceApi",
  "hooks": false,
  "esmExtensions": true
}
EOF
cat >"$out/rtk-query/emptyApi.ts" <<'EOF'
import { createApi, fetchBaseQuery, type BaseQueryFn, type FetchArgs } from '@reduxjs/toolkit/query';

// A failed request as the sample reads it: the status, the body and the Retry-After header.
export interface ApiFailure {
  status: number | string;
  body: unknown;
  retryAfter: string | null;
}

const fetchQuery = fetchBaseQuery({ baseUrl: 'http://127.0.0.1:3000/api/v1' });

// fetchBaseQuery, with the response's Retry-After kept beside a failure's body.
const baseQuery: BaseQueryFn<string | FetchArgs, unknown, ApiFailure> = async (args, api, extra) => {
  const result = await fetchQuery(args, api, extra);
  if (!result.error) return { data: result.data, meta: result.meta };
  const retryAfter = result.meta?.response?.headers.get('Retry-After') ?? null;
  return { error: { status: result.error.status, body: result.error.data, retryAfter }, meta: result.meta };
};

export const emptyApi = createApi({ baseQuery, endpoints: () => ({}) });
EOF
(cd "$out/rtk-query" && "$bin/rtk-query-codegen-openapi" openapi-config.json >/dev/null)
cat >"$out/rtk-query/usage.ts" <<EOF
import { configureStore } from '@reduxjs/toolkit';
import { voiceApi, type ErrorResponse } from './api.js';

const store = configureStore({
  reducer: { [voiceApi.reducerPath]: voiceApi.reducer },
  middleware: (defaults) => defaults().concat(voiceApi.middleware),
});

// The error bodies are the spec's envelope; fetchBaseQuery types a body as unknown.
function isErrorResponse(body: unknown): body is ErrorResponse {
  return typeof body === 'object' && body !== null && 'error' in body;
}

export async function usage(): Promise<string | undefined> {
  const created = await store.dispatch(
    voiceApi.endpoints.createCall.initiate({ callCreate: { agent_id: '$AGENT', to_e164: '+919812345678' } }),
  );
  if (created.error) {
    if (!('body' in created.error) || !isErrorResponse(created.error.body)) return undefined;
    return created.error.body.error.code + ' retry after ' + String(created.error.retryAfter);
  }
  const ids: string[] = [];
  for (let offset = 0; ; ) {
    const page = await store.dispatch(voiceApi.endpoints.listCalls.initiate({ limit: 10, offset, status: 'completed' }));
    if (!page.data) return undefined;
    ids.push(...page.data.data.map((call) => call.id));
    if (!page.data.pagination.has_more) break;
    offset += page.data.data.length;
  }
  return ids[0] ?? created.data.data.status;
}
EOF
# No onDelivery here: the codegen emits only the schemas operations reference, and none references WebhookEvent.
check rtk-query

echo "== (j) openapi-client-axios $(node -p 'require("./node_modules/openapi-client-axios/package.json").version') + typegen $(node -p 'require("./node_modules/openapi-client-axios-typegen/package.json").version')"
"$bin/typegen" "$spec" >"$out/openapi-client-axios/openapi.d.ts"
{
  cat <<EOF
import { OpenAPIClientAxios } from 'openapi-client-axios';
import { isAxiosError } from 'axios';
import type { Client, Components } from './openapi.js';

type ErrorResponse = Components.Schemas.ErrorResponse;

export async function usage(): Promise<string | undefined> {
  const api = new OpenAPIClientAxios({ definition: 'http://127.0.0.1:3000/api/v1/openapi.json' });
  const client = await api.init<Client>();
  try {
    const created = await client.createCall(null, { agent_id: '$AGENT', to_e164: '+919812345678' });
    const ids: string[] = [];
    for (let offset = 0; ; ) {
      const page = await client.listCalls({ limit: 10, offset, status: 'completed' });
      // Its types write an array with maxItems as a tuple of that many optional items.
      ids.push(...page.data.data.flatMap((call) => (call ? [call.id] : [])));
      if (!page.data.pagination.has_more) break;
      offset += page.data.data.length;
    }
    return ids[0] ?? created.data.data.status;
  } catch (error) {
    if (!isAxiosError<ErrorResponse>(error) || !error.response) throw error;
    const retryAfter: unknown = error.response.headers['retry-after'];
    return error.response.data.error.code + ' retry after ' + String(retryAfter);
  }
}
EOF
  on_delivery Components.Schemas.WebhookEvent
} >"$out/openapi-client-axios/usage.ts"
check openapi-client-axios

# Its command is named `openapi`, like @redocly/cli's; which one node_modules/.bin links depends on the
# install order, so the package's own entry point is run.
codegen="node $PWD/node_modules/openapi-typescript-codegen/bin/index.js"
echo "== (k) openapi-typescript-codegen $($codegen --version 2>/dev/null | tr -d '\n') (fetch client, --useUnionTypes)"
$codegen --input "$spec" --output "$out/openapi-typescript-codegen/client" --client fetch --useUnionTypes >/dev/null
# Its imports carry no file extension, written for a bundler: resolved as one, still strict.
bundler=${tsconfig/'"module": "NodeNext"'/'"module": "ESNext"'}
printf '%s\n' "${bundler/'"moduleResolution": "NodeNext"'/'"moduleResolution": "Bundler"'}" >"$out/openapi-typescript-codegen/tsconfig.json"
{
  cat <<EOF
import { ApiError, CallsService, OpenAPI, type ErrorResponse, type WebhookEvent } from './client/index.js';

OpenAPI.BASE = 'http://127.0.0.1:3000/api/v1';

// ApiError keeps the body untyped (and no response headers, so Retry-After cannot be read through it).
function errorBody(error: ApiError): ErrorResponse {
  return error.body as ErrorResponse;
}

export async function usage(): Promise<string | undefined> {
  try {
    const created = await CallsService.createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
    const ids: string[] = [];
    for (let offset = 0; ; ) {
      const page = await CallsService.listCalls(10, offset, 'completed');
      ids.push(...page.data.map((call) => call.id));
      if (!page.pagination.has_more) break;
      offset += page.data.length;
    }
    return ids[0] ?? created.data.status;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return errorBody(error).error.code + ' (HTTP ' + String(error.status) + ')';
  }
}
EOF
  on_delivery WebhookEvent
} >"$out/openapi-typescript-codegen/usage.ts"
check openapi-typescript-codegen

if ((${#failed[@]})); then
  echo "clients:check: type errors in: ${failed[*]} (sources in $out)" >&2
  exit 1
fi
echo "clients:check: all ${#clients[@]} clients generated and type-checked ($out)"
