#!/usr/bin/env bash
# Lints spec/openapi.yaml with Redocly CLI (redocly.yaml) and Spectral (.spectral.yaml); any error or warning fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=node_modules/.bin
# Offline and quiet: no usage telemetry, no update check.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true SCARF_ANALYTICS=false

echo "== Redocly CLI $("$bin/redocly" --version 2>/dev/null) (recommended ruleset)"
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# Redocly exits 0 on warnings, so the gate reads the totals of its JSON report instead.
"$bin/redocly" lint spec/openapi.yaml --format=json >"$report" 2>/dev/null || true
if ! node -e '
  let t;
  try { t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).totals; }
  catch { console.log("redocly: no report (the document could not be parsed)"); process.exit(1); }
  console.log(`redocly: ${t.errors} errors, ${t.warnings} warnings, ${t.ignored} ignored`);
  process.exit(t.errors + t.warnings + t.ignored === 0 ? 0 : 1);
' "$report"; then
  "$bin/redocly" lint spec/openapi.yaml --format=stylish || true
  echo "lint:spec: Redocly reported problems" >&2
  exit 1
fi

echo "== Spectral $("$bin/spectral" --version) (spectral:oas)"
# --fail-severity=hint: any finding at all (error, warning, info or hint) fails.
"$bin/spectral" lint spec/openapi.yaml --ruleset .spectral.yaml --fail-severity=hint

echo "lint:spec: Redocly and Spectral found no problems"
