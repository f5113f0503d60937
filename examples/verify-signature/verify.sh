#!/usr/bin/env bash
# Verifies one webhook delivery (bash and the openssl command line).
#
#   WEBHOOK_SECRET=<secret>[,<previous secret>] ./verify.sh "<x-svc-signature>" ["<x-svc-timestamp>"] < body
#
# The body on stdin must be the raw bytes as received. Exit status 0: genuine and fresh; 1: rejected.
# openssl takes the key on its command line, where other users of the machine can see it (ps): run
# this where that does not matter, or use one of the other examples.
set -euo pipefail

TOLERANCE_MS=$((5 * 60 * 1000))

reject() {
  echo "rejected: $1" >&2
  exit 1
}

# Compares two strings of the same length without stopping at the first difference.
same() {
  [ "${#1}" -eq "${#2}" ] || return 1
  local diff=0 i
  for ((i = 0; i < ${#1}; i++)); do
    [ "${1:i:1}" = "${2:i:1}" ] || diff=1
  done
  [ "$diff" -eq 0 ]
}

[ -n "${WEBHOOK_SECRET:-}" ] || reject "WEBHOOK_SECRET is not set"
[ $# -eq 1 ] || [ $# -eq 2 ] || reject 'usage: verify.sh "<x-svc-signature>" ["<x-svc-timestamp>"] < body'

# x-svc-signature: t=<milliseconds>,v1=<hex>[,v1=<hex>] (one v1 per live secret while a secret is rotated).
t=""
given=()
IFS=',' read -r -a parts <<<"$1"
for part in "${parts[@]}"; do
  key=${part%%=*}
  value=${part#*=}
  key=${key// /}
  value=${value// /}
  if [ "$key" = "t" ]; then
    t=$value
  elif [ "$key" = "v1" ] && [[ $value =~ ^[0-9a-f]{64}$ ]]; then
    given+=("$value")
  fi
done
[[ $t =~ ^[0-9]{1,15}$ ]] || reject "no t= timestamp in the signature header"
[ ${#given[@]} -gt 0 ] || reject "no v1= signature in the signature header"
[ $# -eq 1 ] || [ "$2" = "$t" ] || reject "x-svc-timestamp differs from t"
now=$(($(date +%s) * 1000)) # to the second, which is close enough for a 5-minute window
age=$((now - 10#$t)) # base 10 even with leading zeros, which bash would otherwise read as octal
[ "$age" -le "$TOLERANCE_MS" ] && [ "$age" -ge $((-TOLERANCE_MS)) ] ||
  reject "timestamp is more than 5 minutes from now"

# The body goes to a file, never into a variable, so its bytes stay exactly as received.
body=$(mktemp)
trap 'rm -f "$body"' EXIT
cat >"$body"

# HMAC-SHA256 over "<t>.<raw body>", keyed with the secret's text as given (not hex-decoded).
IFS=',' read -r -a secrets <<<"$WEBHOOK_SECRET"
for secret in "${secrets[@]}"; do
  [ -n "$secret" ] || continue
  expected=$({ printf '%s.' "$t"; cat "$body"; } | openssl dgst -sha256 -hmac "$secret" -r)
  expected=${expected%% *}
  for signature in "${given[@]}"; do
    if same "$expected" "$signature"; then
      echo ok
      exit 0
    fi
  done
done
reject "no v1 signature matches"
