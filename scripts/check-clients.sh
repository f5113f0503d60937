#!/usr/bin/env bash
# Generates clients from spec/openapi.yaml with openapi-typescript + openapi-fetch, @hey-api/openapi-ts and orval,
# then type-checks each one together with a small usage sample (tsc --noEmit, strict); any failure exits non-zero.
# Runs offline; output goes to .clients/ (gitignored, rebuilt on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/node_modules/.bin"
spec="$PWD/spec/openapi.yaml"
out=.clients
rm -rf "$out"
mkdir -p "$out/openapi-fetch" "$out/hey-api" "$out/orval"
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
for client in openapi-fetch hey-api orval; do printf '%s\n' "$tsconfig" >"$out/$client/tsconfig.json"; done

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
import type { paths } from './openapi.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000/api/v1' });

export async function usage(): Promise<string | undefined> {
  const created = await client.POST('/calls', { body: { agent_id: '$AGENT', to_e164: '+919812345678' } });
  if (created.error) return created.error.error.code;
  const listed = await client.GET('/calls', { params: { query: { limit: 10, status: 'completed' } } });
  const detail = await client.GET('/calls/{id}', { params: { path: { id: created.data.data.id } } });
  return listed.data?.data[0]?.id ?? detail.data?.data.status;
}
EOF
check openapi-fetch

echo "== (b) @hey-api/openapi-ts $("$bin/openapi-ts" --version)"
# An absolute path: a bare relative one such as spec/openapi.yaml is read as an "organization/project" registry shorthand.
"$bin/openapi-ts" --input "$spec" --output "$out/hey-api/client" --client @hey-api/client-fetch --no-log-file
cat >"$out/hey-api/usage.ts" <<EOF
import { createCall, getCall, listCalls } from './client/index.js';
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
EOF
check hey-api

echo "== (c) orval $("$bin/orval" --version)"
"$bin/orval" --input "$spec" --output "$out/orval/client.ts" --client fetch --mode single
cat >"$out/orval/usage.ts" <<EOF
import { createCall, getCall, listCalls } from './client.js';

export async function usage(): Promise<string | undefined> {
  const created = await createCall({ agent_id: '$AGENT', to_e164: '+919812345678' });
  if (created.status !== 201) return created.data.error.code;
  const listed = await listCalls({ limit: 10, status: 'completed' });
  const detail = await getCall(created.data.data.id);
  if (listed.status === 200) return listed.data.data[0]?.id;
  return detail.status === 200 ? detail.data.data.status : undefined;
}
EOF
check orval

if ((${#failed[@]})); then
  echo "clients:check: type errors in: ${failed[*]} (sources in $out)" >&2
  exit 1
fi
echo "clients:check: all three clients generated and type-checked ($out)"
