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
# Redocly exits 0 on warnings, so the gate reads the totals of its JSON report instead. Ignored
# findings must be exactly those listed in .redocly.lint-ignore.yaml (each commented there).
"$bin/redocly" lint spec/openapi.yaml --format=json >"$report" 2>/dev/null || true
if ! node -e '
  const fs = require("fs");
  let t;
  try { t = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).totals; }
  catch { console.log("redocly: no report (the document could not be parsed)"); process.exit(1); }
  const listed = fs.existsSync(process.argv[2])
    ? fs.readFileSync(process.argv[2], "utf8").split("\n").filter((line) => /^\s+- /.test(line)).length
    : 0;
  console.log(`redocly: ${t.errors} errors, ${t.warnings} warnings, ${t.ignored} ignored (${listed} listed)`);
  process.exit(t.errors + t.warnings === 0 && t.ignored === listed ? 0 : 1);
' "$report" .redocly.lint-ignore.yaml; then
  "$bin/redocly" lint spec/openapi.yaml --format=stylish || true
  echo "lint:spec: Redocly reported problems" >&2
  exit 1
fi

echo "== Spectral $("$bin/spectral" --version) (spectral:oas + OWASP API Security Top 10)"
# --fail-severity=hint: any finding at all (error, warning, info or hint) fails.
"$bin/spectral" lint spec/openapi.yaml --ruleset .spectral.yaml --fail-severity=hint

echo "lint:spec: Redocly and Spectral found no problems"
