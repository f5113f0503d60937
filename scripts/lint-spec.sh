#!/usr/bin/env bash
# Lints spec/openapi.yaml and the published documents derived from it (generated/openapi.json and
# generated/openapi.yaml, which add createWebhook's callbacks) with Redocly CLI (redocly.yaml,
# raised to recommended-strict) and Spectral (.spectral.yaml, with the OWASP rules); any error or warning fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=node_modules/.bin
documents=(spec/openapi.yaml generated/openapi.json generated/openapi.yaml)
# Offline and quiet: no usage telemetry, no update check.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true SCARF_ANALYTICS=false

echo "== Redocly CLI $("$bin/redocly" --version 2>/dev/null) (recommended-strict ruleset)"
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# Redocly exits 0 on warnings, so the gate reads the totals of its JSON report instead, one document
# at a time. Ignored findings must be exactly those listed for that document in
# .redocly.lint-ignore.yaml (each commented there).
for document in "${documents[@]}"; do
  "$bin/redocly" lint "$document" --extends=recommended-strict --format=json >"$report" 2>/dev/null || true
  if ! node -e '
    const fs = require("fs");
    const { parse } = require("yaml");
    const [reportPath, ignorePath, document] = process.argv.slice(1);
    let t;
    try { t = JSON.parse(fs.readFileSync(reportPath, "utf8")).totals; }
    catch { console.log(`redocly: ${document}: no report (the document could not be parsed)`); process.exit(1); }
    const rules = fs.existsSync(ignorePath) ? (parse(fs.readFileSync(ignorePath, "utf8")) ?? {})[document] ?? {} : {};
    const listed = Object.values(rules).reduce((sum, pointers) => sum + pointers.length, 0);
    console.log(`redocly: ${document}: ${t.errors} errors, ${t.warnings} warnings, ${t.ignored} ignored (${listed} listed)`);
    process.exit(t.errors + t.warnings === 0 && t.ignored === listed ? 0 : 1);
  ' "$report" .redocly.lint-ignore.yaml "$document"; then
    "$bin/redocly" lint "$document" --extends=recommended-strict --format=stylish || true
    echo "lint:spec: Redocly reported problems in $document" >&2
    exit 1
  fi
done

echo "== Spectral $("$bin/spectral" --version) (spectral:oas + OWASP API Security Top 10)"
# --fail-severity=hint: any finding at all (error, warning, info or hint) fails.
"$bin/spectral" lint "${documents[@]}" --ruleset .spectral.yaml --fail-severity=hint

echo "lint:spec: Redocly and Spectral found no problems"
