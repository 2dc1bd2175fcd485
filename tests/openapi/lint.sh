#!/usr/bin/env bash
# Lints docs/openapi.yaml with an independent tool, Redocly CLI (from the npm registry through
# npx). Exit 77 (skipped) where npx or a new enough Node.js (20 or later) is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v npx >/dev/null 2>&1 || { echo "npx not found: skipped"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 20 ] || { echo "Node.js $major is older than 20: skipped"; exit 77; }
cd "$root"
npx --yes @redocly/cli@2.77.0 lint --config docs/redocly.yaml --format=stylish docs/openapi.yaml
