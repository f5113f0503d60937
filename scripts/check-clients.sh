#!/usr/bin/env bash
# Generates clients from spec/openapi.yaml with five generators (openapi-typescript + openapi-fetch,
# @hey-api/openapi-ts, orval, swagger-typescript-api, kubb), then type-checks each one together with a
# small usage sample (tsc --noEmit, strict); any failure exits non-zero. Every sample also switches on
# a webhook body's `event` and reads a field only that kind has (onDelivery), which compiles only when
# the generator kept WebhookEvent a discriminated union. Runs offline; output goes to .clients/
# (gitignored, rebuilt on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/node_modules/.bin"
spec="$PWD/spec/openapi.yaml"
out=.clients
rm -rf "$out"
clients=(openapi-fetch hey-api orval swagger-typescript-api kubb)
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
"$bin/swagger-typescript-api" generate --path "$spec" --output "$out/swagger-typescript-api" --name api.ts \
  --http-client fetch --enum-style union --silent
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

if ((${#failed[@]})); then
  echo "clients:check: type errors in: ${failed[*]} (sources in $out)" >&2
  exit 1
fi
echo "clients:check: all ${#clients[@]} clients generated and type-checked ($out)"
