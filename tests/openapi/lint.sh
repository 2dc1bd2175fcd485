#!/usr/bin/env bash
# Lints docs/openapi.yaml with an independent tool, Redocly CLI 1.25.0 (Node.js 14.19 or later,
# from the npm registry through npx). Exit 77 (skipped) where npx is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v npx >/dev/null 2>&1 || { echo "npx not found: skipped"; exit 77; }
cd "$root"
npx --yes @redocly/cli@1.25.0 lint --config docs/redocly.yaml --format=stylish docs/openapi.yaml
